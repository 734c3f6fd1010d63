import CloudNotesServer
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
    static let preamble = Data("""
        {"jsonrpc":"2.0","id":"fuzz-1","method":"initialize","params":{"locale":"ko-KR","timeZone":"Asia/Seoul"}}
        {"jsonrpc":"2.0","method":"initialized"}

        """.utf8)

    static let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

    /// Runs `input`; stops the process (a crash the fuzzer records) when an invariant breaks.
    static func run(_ input: Data) {
        let store: MemoStore
        do { store = try MemoStore() } catch { fatalError("cannot open an in-memory store: \(error)") }
        let (inputRead, inputWrite) = makePipe()
        let (outputRead, outputWrite) = makePipe()
        let output = PipeDrain(fileDescriptor: outputRead)
        let feeder = Thread {
            writeAll(preamble + input, to: inputWrite)
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
        check(output.lines())
        let integrity = (try? store.integrityCheck()) ?? "unreadable"
        guard integrity == "ok" else { fatalError("integrity_check after the input: \(integrity)") }
    }

    /// Everything on stdout must be a JSON-RPC 2.0 message, one per line.
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

    func lines() -> [Data] {
        done.wait()
        return data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast().map { Data($0) }
            + (data.last == UInt8(ascii: "\n") || data.isEmpty ? [] : [Data("unterminated last line".utf8)])
    }
}
