import CloudNotesServer
import CloudNotesTransport
import CloudNotesStore
import Foundation
import Logging

// MARK: - The message path, for one input

/// Runs one input through the whole message path: framing, the strict JSON check, decoding, dispatch,
/// the mediator and an in-memory store; then checks what must hold whatever the input.
///
/// The input follows an `initialize` and `initialized`, so that it reaches the split view. It can
/// never touch the file system: the server runs with file access off, so `memo/import` takes only
/// inline memos and `memo/export` is refused.
enum MessagePathHarness {
    static let preamble = [
        #"{"jsonrpc":"2.0","id":"fuzz-1","method":"initialize","params":{"locale":"ko-KR","timeZone":"Asia/Seoul"}}"#,
        #"{"jsonrpc":"2.0","method":"initialized"}"#,
    ]

    /// The preamble in `framing`, then `input`: as it is for JSON lines; for `Content-Length` framing,
    /// each of its lines as a body with its header when `framingEachLine`, else raw, where a header
    /// belongs (the header parser's own fuzzing).
    static func stream(_ input: Data, framing: Framing, framingEachLine: Bool) -> Data {
        switch framing {
        case .jsonLines:
            return Data(preamble.joined(separator: "\n").utf8) + Data("\n".utf8) + input
        case .contentLength:
            let lines = framingEachLine ? input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Data($0) } : []
            return (preamble.map { Data($0.utf8) } + lines).reduce(into: Data()) { stream, body in
                stream += Data("Content-Length: \(body.count)\r\n\r\n".utf8) + body
            } + (framingEachLine ? Data() : input)
        }
    }

    static let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

    /// Runs `input`; stops the process (a crash the fuzzer records) when an invariant breaks.
    static func run(_ input: Data, framing: Framing = .jsonLines, framingEachLine: Bool = true) {
        let store: MemoStore
        do { store = try MemoStore() } catch { fatalError("cannot open an in-memory store: \(error)") }
        let (inputRead, inputWrite) = makePipe()
        let (outputRead, outputWrite) = makePipe()
        let output = PipeDrain(fileDescriptor: outputRead)
        let feeder = Thread {
            writeAll(stream(input, framing: framing, framingEachLine: framingEachLine), to: inputWrite)
            close(inputWrite)
        }
        feeder.start()
        let finished = DispatchSemaphore(value: 0)
        Task {
            let configuration = ServerConfiguration(
                version: ServerConfiguration.standard.version, limits: ServerConfiguration.standard.limits, allowsFiles: false)
            _ = await Server(store: store, input: inputRead, output: outputWrite, configuration: configuration, logger: logger).run()
            close(outputWrite)
            finished.signal()
        }
        finished.wait()
        close(inputRead)
        check(framing == .jsonLines ? output.lines() : output.bodies())
        let integrity = (try? store.integrityCheck()) ?? "unreadable"
        guard integrity == "ok" else { fatalError("integrity_check after the input: \(integrity)") }
    }

    /// Everything on stdout must be a JSON-RPC 2.0 message, one per line or body.
    static func check(_ lines: [Data]) {
        for line in lines {
            guard let object = try? JSONSerialization.jsonObject(with: line) as? [String: Any],
                  object["jsonrpc"] as? String == "2.0"
            else {
                fatalError("stdout carried a line that is not a JSON-RPC message: \(String(decoding: line.prefix(300), as: UTF8.self))")
            }
        }
    }

    private static func makePipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { fatalError("pipe: \(errno)") }
        return (fds[0], fds[1])
    }

    private static func writeAll(_ data: Data, to fd: Int32) {
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }  // the server stopped reading (exit): the rest is not needed
                offset += written
            }
        }
    }
}

/// Reads a pipe to its end on a thread of its own, so the server never blocks on a full pipe.
final class PipeDrain: @unchecked Sendable {
    // Written by the reading thread only until `done` is signalled; read only after.
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(fileDescriptor: Int32) {
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(fileDescriptor, &buffer, buffer.count)
                if count <= 0 { break }
                data.append(buffer, count: count)
            }
            close(fileDescriptor)
            done.signal()
        }.start()
    }

    /// The bodies of `Content-Length` framing; a header that is not exactly that is a failure.
    func bodies() -> [Data] {
        done.wait()
        var bodies: [Data] = []
        var rest = data[...]
        while !rest.isEmpty {
            guard let end = rest.firstRange(of: Data("\r\n\r\n".utf8)),
                  let header = String(data: rest[..<end.lowerBound], encoding: .utf8), header.hasPrefix("Content-Length: "),
                  let length = Int(header.dropFirst("Content-Length: ".count)), rest.count - (end.upperBound - rest.startIndex) >= length
            else {
                return bodies + [Data("a header that is not 'Content-Length: N' and its body".utf8)]
            }
            bodies.append(Data(rest[end.upperBound..<(end.upperBound + length)]))
            rest = rest[(end.upperBound + length)...]
        }
        return bodies
    }

    func lines() -> [Data] {
        done.wait()
        return data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast().map { Data($0) }
            + (data.last == UInt8(ascii: "\n") || data.isEmpty ? [] : [Data("unterminated last line".utf8)])
    }
}
