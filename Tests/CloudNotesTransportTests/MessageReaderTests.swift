import Foundation
import Synchronization
import Testing

@testable import CloudNotesTransport

/// Frames as text, for comparing: a line or body as itself, the rest named.
private func describe(_ frame: Frame) -> String {
    switch frame {
    case .line(let data): "line " + String(decoding: data, as: UTF8.self)
    case .body(let data): "body " + String(decoding: data, as: UTF8.self)
    case .oversized(let count): "oversized \(count)"
    case .malformed(let problem): "malformed: " + problem
    }
}

@Suite("Message reader")
struct MessageReaderTests {
    /// The framing and frames the reader finds in `input`, written to a pipe in one go.
    func read(_ input: [UInt8], maxMessageBytes: Int = 16) throws -> (Framing?, [String]) {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let writeEnd = fds[1]
        let writer = Thread {
            input.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = write(writeEnd, bytes.baseAddress! + offset, bytes.count - offset)
                    guard written > 0 else { break }
                    offset += written
                }
            }
            close(writeEnd)
        }
        writer.start()
        var framing: Framing?
        var found: [String] = []
        MessageReader(fileDescriptor: fds[0], maxMessageBytes: maxMessageBytes).readLoop(
            onFraming: { framing = $0 },
            onFrame: { frame in
                #expect(framing != nil, "a frame before the framing was told")
                found.append(describe(frame))
            })
        close(fds[0])
        return (framing, found)
    }

    @Test("lines end at \\n; a \\r before it is dropped; a last line without \\n counts")
    func splitsLines() throws {
        let (framing, frames) = try read(Array("a\nb\r\n\nc".utf8))
        #expect(framing == .jsonLines)
        #expect(frames == ["line a", "line b", "line ", "line c"])
    }

    @Test("a line over the limit is dropped whole and reading carries on")
    func oversizedLines() throws {
        let long = String(repeating: "x", count: 100)
        #expect(try read(Array("\(long)\nok\n".utf8)).1 == ["oversized 100", "line ok"])
    }

    @Test("lines and bodies longer than one read are put together")
    func longMessages() throws {
        let long = String(repeating: "y", count: 2 * MessageReader.readSize + 12_345)
        #expect(try read(Array("\(long)\nz\n".utf8), maxMessageBytes: 1 << 20).1 == ["line " + long, "line z"])
        let framed = "Content-Length: \(long.utf8.count)\r\n\r\n\(long)Content-Length: 1\r\n\r\nz"
        let (framing, frames) = try read(Array(framed.utf8), maxMessageBytes: 1 << 20)
        #expect(framing == .contentLength)
        #expect(frames == ["body " + long, "body z"])
    }

    @Test("nothing but blank input decides no framing")
    func blankInput() throws {
        let (framing, frames) = try read(Array(" \r\n\n".utf8))
        #expect(framing == nil)
        #expect(frames.isEmpty)
    }
}

@Suite("Frame splitter")
struct FrameSplitterTests {
    /// The frames of `input` fed whole, checked against the same input fed a byte at a time and in
    /// chunks of 7 bytes: the frames must not depend on how `read(2)` cut the input.
    func frames(_ input: String, limit: Int = 64, expecting framing: Framing? = nil) -> [String] {
        let bytes = Array(input.utf8)
        var results: [[String]] = []
        for size in [bytes.count, 1, 7] where size > 0 {
            var splitter = FrameSplitter(maxMessageBytes: limit)
            var found: [String] = []
            var start = 0
            while start < bytes.count {
                let end = min(start + size, bytes.count)
                bytes[start..<end].withUnsafeBytes { splitter.feed($0) { found.append(describe($0)) } }
                start = end
            }
            splitter.finish { found.append(describe($0)) }
            if let framing { #expect(splitter.framing == framing, "fed in pieces of \(size)") }
            results.append(found)
        }
        for other in results.dropFirst() {
            #expect(other == results.first, "the frames depend on how the input was cut")
        }
        return results.first ?? []
    }

    static let body = #"{"jsonrpc":"2.0","method":"x"}"#
    /// A well-formed message with `body`.
    static func message(_ body: String = body) -> String { "Content-Length: \(body.utf8.count)\r\n\r\n\(body)" }

    @Test("the first bytes decide: a header means Content-Length, anything else JSON lines")
    func detection() {
        #expect(frames(Self.message() + Self.message(), expecting: .contentLength) == ["body \(Self.body)", "body \(Self.body)"])
        #expect(frames("\r\n  \n" + Self.message(), expecting: .contentLength) == ["body \(Self.body)"])
        #expect(frames(Self.body + "\n", expecting: .jsonLines) == ["line \(Self.body)"])
        #expect(frames("hello world\n", expecting: .jsonLines) == ["line hello world"])
        #expect(frames("content-length: 2\n\n{}", expecting: .contentLength) == ["body {}"])
    }

    @Test("other headers are read and ignored; Content-Type's charset must be UTF-8")
    func otherHeaders() {
        let typed = "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}"
        #expect(frames(typed + "X-Other: 1\r\nContent-Length: 2\r\n\r\n[]") == ["body {}", "body []"])
        let latin = "Content-Length: 2\r\nContent-Type: text/plain; charset=latin1\r\n\r\n{}"
        #expect(frames(latin + Self.message()) == ["malformed: the body must be UTF-8, not charset 'latin1'", "body \(Self.body)"])
    }

    @Test("a missing, negative or non-numeric Content-Length is refused, and reading resumes at the next header")
    func badLengths() {
        let next = Self.message()
        #expect(frames("Content-Type: application/json\r\n\r\n{\"a\":1}" + next)
            == ["malformed: the message's header has no Content-Length", "body \(Self.body)"])
        #expect(frames("Content-Length: -5\r\n\r\n{\"a\":1}" + next)
            == ["malformed: Content-Length must be a whole number of bytes, not '-5'", "body \(Self.body)"])
        #expect(frames("Content-Length: ten\r\n\r\n{\"a\":1}" + next)
            == ["malformed: Content-Length must be a whole number of bytes, not 'ten'", "body \(Self.body)"])
        #expect(frames("Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}" + next)
            == ["malformed: two Content-Length headers disagree (2 and 3)", "body \(Self.body)"])
        #expect(frames("Content-Length: 99999999999999999999\r\n\r\n{}" + next)
            == ["malformed: Content-Length 99999999999999999999 is larger than any message can be", "body \(Self.body)"])
    }

    @Test("a body over the limit is reported once its header is read, and dropped as it is read")
    func oversizedBody() {
        let big = String(repeating: "x", count: 100)
        #expect(frames("Content-Length: 100\r\n\r\n\(big)" + Self.message()) == ["oversized 100", "body \(Self.body)"])
        #expect(frames("Content-Length: 100\r\n\r\nxx") == ["oversized 100"], "before the body has come")
    }

    @Test("blank lines, and lines of spaces, between messages are skipped")
    func blankLinesBetweenMessages() {
        #expect(frames(Self.message() + "\r\n \t\r\n" + Self.message()) == ["body \(Self.body)", "body \(Self.body)"])
    }

    @Test("a header without its blank line is refused; the next message is read")
    func missingBlankLine() {
        #expect(frames("Content-Length: 2\r\n{}" + Self.message())
            == ["malformed: the header must end with an empty line (\\r\\n\\r\\n) before the body", "body \(Self.body)"])
        #expect(frames(Self.message() + "Content-Length 2\r\n\r\n{}" + Self.message())
            == ["body \(Self.body)", "malformed: a header line must be 'Name: value', not 'Content-Length 2'", "body \(Self.body)"])
    }

    @Test("a body that is not JSON is handed on as it is, for the decoder to refuse")
    func notJSON() {
        #expect(frames(Self.message("nope") + Self.message()) == ["body nope", "body \(Self.body)"])
        #expect(frames("Content-Length: 0\r\n\r\n" + Self.message()) == ["body ", "body \(Self.body)"])
    }

    @Test("the end of input inside a header or a body is reported")
    func endOfInput() {
        #expect(frames(Self.message() + "Content-Length: 30\r\n\r\n{\"jsonrpc\"")
            == ["body \(Self.body)", "malformed: the input ended after 10 of the 30 bytes of a message's body"])
        #expect(frames(Self.message() + "Content-Len") == ["body \(Self.body)", "malformed: the input ended inside a message's header"])
    }

    @Test("headers after a session began in JSON lines are refused, and their body skipped")
    func headersInLineSession() {
        let refused = "malformed: this session sends JSON lines (its first message was one): a Content-Length header is not read as one"
        #expect(frames(Self.body + "\n" + Self.message() + Self.message(#"{"b":2}"#) + "\n" + Self.body + "\n")
            == ["line \(Self.body)", refused, refused, "line ", "line \(Self.body)"])
    }

    @Test("a JSON line in a Content-Length session is refused whole")
    func lineInHeaderSession() {
        let refused = "malformed: this session uses Content-Length headers (its first message had one): a JSON line without one is not read"
        let long = "{\"a\":\"" + String(repeating: "x", count: 10_000) + "\"}"
        #expect(frames(Self.message() + Self.body + "\n" + long + "\n" + Self.message())
            == ["body \(Self.body)", refused, refused, "body \(Self.body)"])
    }

    @Test("a header line over its limit is refused and reading resumes at the next message")
    func longHeader() {
        let long = "X-Long: " + String(repeating: "x", count: FrameSplitter.maxHeaderLineBytes)
        #expect(frames(long + "\r\n" + Self.message())
            == ["malformed: a header line is longer than \(FrameSplitter.maxHeaderLineBytes) bytes", "body \(Self.body)"])
    }
}
