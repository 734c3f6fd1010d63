import CloudNotesProtocol
import CloudNotesStore
import CloudNotesTransport
import Foundation
import Logging
import Testing

@testable import CloudNotesServer

/// A server running in this process on two pipes, and the client's ends of them.
final class PipedServer: @unchecked Sendable {
    let toServer: FileHandle
    let fromServer: FileHandle
    let finished: Task<Int32, Never>
    private var pending = Data()
    /// Kept for the server's sake: a pipe closes both its ends when it goes away.
    private let input = Pipe()
    private let output = Pipe()

    init(store: MemoStore) {
        toServer = input.fileHandleForWriting
        fromServer = output.fileHandleForReading
        let server = Server(
            store: store, input: input.fileHandleForReading.fileDescriptor,
            output: output.fileHandleForWriting.fileDescriptor, logger: Logger(label: "test"))
        finished = Task { await server.run() }
    }

    func send(_ line: String) {
        toServer.write(Data((line + "\n").utf8))
    }

    /// The next message the server wrote.
    func next() throws -> JSONValue {
        while true {
            if let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = pending[pending.startIndex..<newline]
                pending = Data(pending[(newline + 1)...])
                return try JSONDecoder().decode(JSONValue.self, from: line)
            }
            let chunk = fromServer.availableData
            guard !chunk.isEmpty else { throw CocoaError(.fileReadUnknown) }
            pending.append(chunk)
        }
    }

    /// The response to request `id`, skipping notifications.
    func response(to id: Int) throws -> JSONValue {
        while true {
            let message = try next()
            if message["id"] == .number(Double(id)) { return message }
        }
    }
}

@Suite("Server", .serialized)
struct ServerTests {
    @Test("every request of the registry has a handler, and the lifecycle holds around them")
    func everyRequestIsHandled() async throws {
        let server = PipedServer(store: try MemoStore())
        server.send(#"{"jsonrpc":"2.0","id":1,"method":"memo/list"}"#)
        #expect(try server.response(to: 1)["error"]?["code"] == -32002)
        server.send(#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#)
        #expect(try server.response(to: 2)["result"]?["protocolVersion"] == .string(ProtocolRegistry.protocolVersion))
        var id = 10
        for request in ProtocolRegistry.requests where request.method != ShutdownRequest.method {
            id += 1
            let params = String(decoding: try JSONEncoder().encode(request.exampleParams), as: UTF8.self)
            server.send(#"{"jsonrpc":"2.0","id":\#(id),"method":"\#(request.method)","params":\#(params)}"#)
            let code = try server.response(to: id)["error"]?["code"]
            #expect(code != -32601 && code != -32602 && code != -32603, "\(request.method): \(String(describing: code))")
        }
        server.send(#"{"jsonrpc":"2.0","id":99,"method":"shutdown"}"#)
        #expect(try server.response(to: 99)["result"] == .null)
        server.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(await server.finished.value == 0)
    }

    @Test("a request cancelled before its turn is answered -32800")
    func cancelledWhileQueued() throws {
        let registry = CancellationRegistry()
        registry.cancel(.number(5))
        #expect(registry.takeCancellation(of: .number(5)))
        #expect(!registry.takeCancellation(of: .number(5)))
        let fired = CancelFlag()
        registry.register(.string("long")) { fired.set() }
        registry.cancel(.string("long"))
        #expect(fired.isSet)
        registry.finish(.string("long"))
        #expect(!registry.takeCancellation(of: .string("long")))
    }

    @Test("progress is reported at most once per whole percent")
    func progressThrottling() throws {
        let pipe = Pipe()
        let reporter = ProgressReporter(token: .string("t"), writer: MessageWriter(fileDescriptor: pipe.fileHandleForWriting.fileDescriptor))
        reporter.begin("Working")
        for done in 0...10_000 { reporter.report(done, of: 10_000) }
        reporter.end("Done")
        try pipe.fileHandleForWriting.close()
        let lines = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 1 + 101 + 1)
    }

    @Test("a client that writes without reading is held back by its pipe, not queued without bound, and loses nothing")
    func backpressure() async throws {
        let server = PipedServer(store: try MemoStore())
        // The client blocks (in sleeps and reads) on a thread of its own: on the concurrency pool it
        // could take the thread that the server needs to catch up.
        try await onThreadOfItsOwn { try Self.writeWithoutReading(to: server) }
    }

    private static func writeWithoutReading(to server: PipedServer) throws {
        let input = server.toServer.fileDescriptor
        #expect(fcntl(input, F_SETFL, fcntl(input, F_GETFL) | O_NONBLOCK) == 0)
        // Requests before `initialize` are each refused with one short error; nobody reads them
        // until the client's own writes are refused.
        var sent = 0
        var written = 0
        var blocked = false
        while written < 64 << 20 {
            let line = Array(#"{"jsonrpc":"2.0","id":\#(sent + 1),"method":"memo/list","params":{"limit":1}}"#.utf8) + [10]
            let count = line.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EAGAIN {
                // The server may still be catching up: it is held back only if the pipe stays full.
                Thread.sleep(forTimeInterval: 0.2)
                if line.withUnsafeBytes({ write(input, $0.baseAddress, $0.count) }) < 0, errno == EAGAIN {
                    blocked = true
                    break
                }
                // It went in: a pipe takes a write this short whole or not at all.
            } else {
                #expect(count == line.count)
            }
            sent += 1
            written += line.count
        }
        // Queued lines (256), the reader's chunk (256 KB) and the two pipes (256 KB each) hold under 1 MB.
        #expect(blocked, "the server took \(written) bytes from a client that reads nothing")
        #expect(written < 4 << 20)
        for id in 1...sent {
            #expect(try server.next()["id"] == .number(Double(id)))
        }
    }

    @Test("end of input ends the server with code 0, and exit without shutdown with 1")
    func exitCodes() async throws {
        let ended = PipedServer(store: try MemoStore())
        try ended.toServer.close()
        #expect(await ended.finished.value == 0)
        let exited = PipedServer(store: try MemoStore())
        exited.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(await exited.finished.value == 1)
    }
}

/// Runs `body` on a new thread, off the concurrency pool, and returns when it has.
func onThreadOfItsOwn(_ body: @escaping @Sendable () throws -> Void) async throws {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

extension RequestType {
    static var exampleParams: any Encodable { example }
}
