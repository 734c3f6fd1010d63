import Foundation

// MARK: - Framing

/// How messages are delimited on the wire. The server detects it from the first bytes a client sends
/// and answers in the same framing for the whole session.
public enum Framing: Sendable, Equatable {
    /// One JSON object per `\n`-terminated line.
    case jsonLines
    /// The LSP base protocol: `Content-Length: N\r\n`, optional other headers, `\r\n`, then N bytes.
    case contentLength
}

/// What the reader found in the input.
public enum Frame: Sendable, Equatable {
    /// One line without its `\n` (and without a `\r` before it); a blank one is ignored.
    case line(Data)
    /// One `Content-Length` body, exactly as long as its header said.
    case body(Data)
    /// A message longer than the limit; its bytes were dropped, the reader carries on at the next one.
    case oversized(byteCount: Int)
    /// Framing that cannot be read (a bad header, a body cut short by the end of input): why.
    case malformed(String)
}

// MARK: - Splitting the input into frames

/// Cuts the bytes a client sends into frames, in either framing, without I/O: fed one chunk at a time
/// as `read(2)` returns them.
///
/// The first bytes that are not blank decide the framing: a header (`Name:` at the start of a line)
/// means `Content-Length` framing, anything else JSON lines. A bad header is reported and the stream
/// recovers at the next message: after a header whose length can be read, by skipping its body; after
/// one whose length cannot, at the next `Content-Length` header.
struct FrameSplitter {
    /// The longest message, in bytes, that is handed on.
    let maxMessageBytes: Int
    /// The framing, once the first bytes decided it.
    private(set) var framing: Framing?

    private var state = State.start
    /// The line, header line or body being collected.
    private var pending = Data()

    /// The longest header line, and the most header lines in one message: LSP clients send one or two.
    static let maxHeaderLineBytes = 8192
    static let maxHeaderLines = 32

    private enum State {
        /// Nothing but blank lines yet.
        case start
        /// Reading the first token, to tell a header from a JSON line.
        case detecting
        /// In a JSON line.
        case line
        /// Dropping the rest of a line: an oversized one (`report`), or a JSON line in a header session.
        case droppingLine(dropped: Int, report: Bool)
        /// In the header lines of a message.
        case header(HeaderBlock)
        /// In a body, this many bytes still to come.
        case body(remaining: Int)
        /// Dropping a body, this many bytes still to come; `total` is reported as oversized when set.
        case droppingBody(remaining: Int, oversized: Int?)
        /// After a header whose body cannot be found: looking for the next `Content-Length`, this many
        /// bytes of it matched.
        case seeking(matched: Int)
    }

    /// What the header lines of one message said so far.
    private struct HeaderBlock {
        var lines = 0
        var length: Int?
        /// False once two lengths disagreed: the body cannot be skipped then.
        var lengthIsKnown = true
        /// Why the message cannot be read, once a header said so.
        var problem: String?
        /// A header block in a JSON-lines session: already refused, its body is skipped without a word.
        var stray = false
    }

    init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    // MARK: Feeding

    /// Takes the next bytes of the input; `emit` runs for each frame they complete, in order.
    mutating func feed(_ bytes: UnsafeRawBufferPointer, _ emit: (Frame) -> Void) {
        var position = 0
        while position < bytes.count {
            position = step(bytes, from: position, emit)
        }
    }

    /// The end of input: the frame under way, if any, is completed or reported.
    mutating func finish(_ emit: (Frame) -> Void) {
        switch state {
        case .detecting, .line:
            if !pending.isEmpty { emitLine(emit) }  // a last line without its newline still counts
        case .droppingLine(let dropped, let report):
            if report { emit(.oversized(byteCount: dropped)) }
        case .header(let block):
            if block.lines > 0 || !pending.isEmpty, !block.stray {
                emit(.malformed("the input ended inside a message's header"))
            }
        case .body(let remaining):
            let length = pending.count + remaining
            emit(.malformed("the input ended after \(pending.count) of the \(length) bytes of a message's body"))
        case .droppingBody(_, let oversized?):
            emit(.oversized(byteCount: oversized))
        case .start, .droppingBody, .seeking:
            break
        }
        pending = Data()
        state = .start
    }

    /// Consumes bytes from `position` in the current state; returns where the next step starts.
    private mutating func step(_ bytes: UnsafeRawBufferPointer, from position: Int, _ emit: (Frame) -> Void) -> Int {
        switch state {
        case .start:
            var index = position
            while index < bytes.count, Self.isBlank(bytes[index]) { index += 1 }
            if index < bytes.count {
                if Self.isTokenByte(bytes[index]) {
                    state = .detecting
                } else {
                    framing = .jsonLines
                    state = .line
                }
            }
            return index
        case .detecting:
            var index = position
            while index < bytes.count, Self.isTokenByte(bytes[index]), pending.count < 256 {
                pending.append(bytes[index])
                index += 1
            }
            guard index < bytes.count else { return index }
            if bytes[index] == UInt8(ascii: ":"), pending.count < 256 {
                framing = .contentLength
                state = .header(HeaderBlock())
            } else {
                framing = .jsonLines
                state = .line
            }
            return index
        case .line:
            let (next, collected) = collectLine(bytes, from: position, limit: maxMessageBytes)
            switch collected {
            case .partial: break
            case .complete: emitLine(emit)
            case .overflow(let dropped): state = .droppingLine(dropped: dropped.count, report: true)
            }
            return next
        case .droppingLine(let dropped, let report):
            let (end, found) = Self.lineEnd(bytes, from: position)
            guard found else {
                state = .droppingLine(dropped: dropped + end - position, report: report)
                return end
            }
            if report { emit(.oversized(byteCount: dropped + end - position)) }
            state = framing == .contentLength ? .header(HeaderBlock()) : .line
            return end + 1
        case .header(let block):
            let (next, collected) = collectLine(bytes, from: position, limit: Self.maxHeaderLineBytes)
            switch collected {
            case .partial:
                break
            case .complete:
                headerLine(block, emit)
            case .overflow(let dropped) where block.stray:
                state = .droppingLine(dropped: dropped.count, report: false)
            case .overflow(let dropped) where block.lines == 0 && Self.startsJSON(dropped):
                emit(.malformed(Self.jsonLineInHeaderSession))
                state = .droppingLine(dropped: dropped.count, report: false)
            case .overflow:
                emit(.malformed("a header line is longer than \(Self.maxHeaderLineBytes) bytes"))
                seek(in: Data(), emit)
            }
            return next
        case .body(let remaining):
            let taken = min(remaining, bytes.count - position)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + taken)]))
            if taken == remaining {
                emit(.body(pending))
                pending = Data()
                state = .header(HeaderBlock())
            } else {
                state = .body(remaining: remaining - taken)
            }
            return position + taken
        case .droppingBody(let remaining, let oversized):
            let taken = min(remaining, bytes.count - position)
            if taken == remaining {
                if let oversized { emit(.oversized(byteCount: oversized)) }
                state = framing == .contentLength ? .header(HeaderBlock()) : .line
            } else {
                state = .droppingBody(remaining: remaining - taken, oversized: oversized)
            }
            return position + taken
        case .seeking(var matched):
            var index = position
            while index < bytes.count, matched < Self.lengthName.count {
                let byte = Self.lowercased(bytes[index])
                if byte == Self.lengthName[matched] {
                    matched += 1
                } else {
                    matched = byte == Self.lengthName[0] ? 1 : 0  // the name repeats no prefix of itself
                }
                index += 1
            }
            if matched == Self.lengthName.count {
                pending = Data("Content-Length:".utf8)
                state = .header(HeaderBlock())
            } else {
                state = .seeking(matched: matched)
            }
            return index
        }
    }

    /// What `collectLine` made of the bytes it took.
    private enum Collected {
        /// The line goes on past them.
        case partial
        /// The line is in `pending`, without its end.
        case complete
        /// The line passed the limit: its bytes so far, dropped from `pending`.
        case overflow(Data)
    }

    /// Appends bytes up to the next `\n` to `pending`, stripping a `\r` before it; returns where the next
    /// step starts (past the `\n`; at it, after an overflow, for the state that drops the rest).
    private mutating func collectLine(_ bytes: UnsafeRawBufferPointer, from position: Int, limit: Int) -> (Int, Collected) {
        let (end, found) = Self.lineEnd(bytes, from: position)
        pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[position..<end]))
        if pending.count > limit {
            let dropped = pending
            pending = Data()
            return (end, .overflow(dropped))
        }
        guard found else { return (end, .partial) }
        if pending.last == UInt8(ascii: "\r") { pending.removeLast() }
        return (end + 1, .complete)
    }

    // MARK: JSON lines

    /// Hands on the line in `pending`, unless it starts a header block in a JSON-lines session.
    private mutating func emitLine(_ emit: (Frame) -> Void) {
        let line = pending
        pending = Data()
        if framing == .jsonLines, Self.startsHeader(line) {
            emit(.malformed(
                "this session sends JSON lines (its first message was one): a Content-Length header is not read as one"))
            headerLine(HeaderBlock(stray: true), line: line, emit)
            return
        }
        emit(.line(line))
    }

    // MARK: Headers

    private mutating func headerLine(_ block: HeaderBlock, _ emit: (Frame) -> Void) {
        let line = pending
        pending = Data()
        headerLine(block, line: line, emit)
    }

    /// Reads one header line of `block` (the line, without its end).
    private mutating func headerLine(_ block: HeaderBlock, line: Data, _ emit: (Frame) -> Void) {
        var block = block
        if line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) {
            if block.lines == 0 {
                state = .header(block)  // a blank line between messages
            } else {
                endHeader(block, emit)
            }
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
              line[line.startIndex..<colon].allSatisfy(Self.isTokenByte)
        else {
            if block.stray {
                // Not a header after all: the session goes on in JSON lines, with this line.
                state = .line
                emit(.line(line))
                return
            }
            let shown = String(decoding: line.prefix(60), as: UTF8.self)
            if block.lines == 0, Self.startsJSON(line) {
                emit(.malformed(Self.jsonLineInHeaderSession))
                state = .header(HeaderBlock())
            } else if block.length != nil, Self.startsJSON(line) {
                emit(.malformed("the header must end with an empty line (\\r\\n\\r\\n) before the body"))
                seek(in: line, emit)
            } else {
                emit(.malformed("a header line must be 'Name: value', not '\(shown)'"))
                seek(in: line, emit)
            }
            return
        }
        block.lines += 1
        let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).lowercased()
        let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingCharacters(in: .whitespaces)
        switch name {
        case "content-length":
            if !value.isEmpty, value.allSatisfy(\.isASCIIDigit), Int(value) == nil {
                block.problem = block.problem ?? "Content-Length \(value.prefix(40)) is larger than any message can be"
                block.lengthIsKnown = false
            } else if let length = Int(value), length >= 0, value.allSatisfy(\.isASCIIDigit) {
                if let earlier = block.length, earlier != length {
                    block.problem = block.problem ?? "two Content-Length headers disagree (\(earlier) and \(length))"
                    block.lengthIsKnown = false
                }
                block.length = length
            } else {
                block.problem = block.problem ?? "Content-Length must be a whole number of bytes, not '\(value.prefix(40))'"
            }
        case "content-type":
            if let charset = Self.charset(value), !["utf-8", "utf8"].contains(charset) {
                block.problem = block.problem ?? "the body must be UTF-8, not charset '\(charset.prefix(40))'"
            }
        default:
            break  // other headers mean nothing here, as in LSP
        }
        if block.lines > Self.maxHeaderLines {
            if !block.stray { emit(.malformed("a message has more than \(Self.maxHeaderLines) header lines")) }
            seek(in: Data(), emit)
            return
        }
        state = .header(block)
    }

    /// The blank line after the headers: what comes next is the body, to read or to skip.
    private mutating func endHeader(_ block: HeaderBlock, _ emit: (Frame) -> Void) {
        if block.stray {
            state = block.length.map { .droppingBody(remaining: $0, oversized: nil) } ?? .line
        } else if let problem = block.problem {
            emit(.malformed(problem))
            if let length = block.length, block.lengthIsKnown {
                state = .droppingBody(remaining: length, oversized: nil)
            } else {
                seek(in: Data(), emit)
            }
        } else if let length = block.length {
            if length > maxMessageBytes {
                // Said at once, while the body is dropped: a client waiting for it learns why now.
                emit(.oversized(byteCount: length))
                state = .droppingBody(remaining: length, oversized: nil)
            } else if length == 0 {
                emit(.body(Data()))
                state = .header(HeaderBlock())
            } else {
                pending.reserveCapacity(length)
                state = .body(remaining: length)
            }
        } else {
            emit(.malformed("the message's header has no Content-Length"))
            seek(in: Data(), emit)
        }
        if case .droppingBody(0, let oversized) = state {
            if let oversized { emit(.oversized(byteCount: oversized)) }
            state = framing == .contentLength ? .header(HeaderBlock()) : .line
        }
    }

    /// Looks for the next `Content-Length` header: first in `seen`, a line already taken from the input
    /// (a body glued to the next header), then in the input.
    private mutating func seek(in seen: Data, _ emit: (Frame) -> Void) {
        pending = Data()
        let lower = seen.map(Self.lowercased)
        if let start = lower.indices.first(where: { lower[$0...].starts(with: Self.lengthName) }) {
            headerLine(HeaderBlock(), line: Data(seen.dropFirst(start)), emit)
        } else {
            state = .seeking(matched: 0)
        }
    }

    // MARK: Bytes

    /// `content-length:`, lower case, as `seeking` matches it.
    private static let lengthName = Array("content-length:".utf8)

    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n")
    }

    /// A byte of an HTTP header name (RFC 9110's token, less the rarer punctuation).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default:
            false
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    private static let jsonLineInHeaderSession =
        "this session uses Content-Length headers (its first message had one): a JSON line without one is not read"

    private static func startsJSON(_ line: Data) -> Bool {
        line.first == UInt8(ascii: "{") || line.first == UInt8(ascii: "[")
    }

    /// Whether a JSON line is in fact a `Content-Length` or `Content-Type` header.
    private static func startsHeader(_ line: Data) -> Bool {
        let lower = line.prefix(16).map(lowercased)
        return lower.starts(with: "content-length:".utf8) || lower.starts(with: "content-type:".utf8)
    }

    /// The `charset` parameter of a `Content-Type` value, lower case; nil without one.
    private static func charset(_ contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset" else { continue }
            return parts[1].trimmingCharacters(in: CharacterSet.whitespaces.union(["\""])).lowercased()
        }
        return nil
    }

    /// Where the line from `position` ends: the index of its `\n` (found), or the end of the bytes.
    private static func lineEnd(_ bytes: UnsafeRawBufferPointer, from position: Int) -> (Int, Bool) {
        guard position < bytes.count,
              let found = memchr(bytes.baseAddress! + position, Int32(UInt8(ascii: "\n")), bytes.count - position)
        else { return (bytes.count, false) }
        return (bytes.baseAddress!.distance(to: UnsafeRawPointer(found)), true)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
