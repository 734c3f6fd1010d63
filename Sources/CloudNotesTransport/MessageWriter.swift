import CloudNotesProtocol
import Foundation
import Synchronization

// MARK: - Writing messages

/// Writes JSON-RPC messages, one per line, to a file descriptor; safe to call from any thread.
public final class MessageWriter: Sendable {
    let fileDescriptor: Int32
    private let lock = Mutex(())
    /// Keys come out in declaration order: clients must not depend on key order.
    private let encoder = StreamingJSONEncoder()

    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    public func sendNotification<N: NotificationType>(_ notification: N) {
        write(OutgoingNotification(method: N.method, params: notification))
    }

    public func sendResult<R: Encodable>(_ result: R, id: RequestID) {
        write(OutgoingResult(id: id, result: result))
    }

    public func sendError(_ error: ResponseError, id: RequestID?) {
        write(OutgoingError(id: id, error: error))
    }

    /// Encodes and writes one message; a message that cannot be encoded becomes an internal error.
    func write(_ message: some Encodable) {
        var data: [UInt8]
        do {
            data = try encoder.encode(message)
        } catch {
            data = Array(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error: a reply could not be encoded"}}"#.utf8)
        }
        data.append(UInt8(ascii: "\n"))
        lock.withLock { _ in
            data.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    let written = Foundation.write(fileDescriptor, buffer.baseAddress! + offset, buffer.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        return  // the client went away; the read side will see end of input
                    }
                    offset += written
                }
            }
        }
    }
}

// MARK: - Outgoing envelopes

struct OutgoingNotification<Params: Encodable>: Encodable {
    var jsonrpc = "2.0"
    var method: String
    var params: Params
}

struct OutgoingResult<Result: Encodable>: Encodable {
    var jsonrpc = "2.0"
    var id: RequestID
    var result: Result
}

struct OutgoingError: Encodable {
    var jsonrpc = "2.0"
    var id: RequestID?
    var error: ResponseError

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(jsonrpc, forKey: .jsonrpc)
        try container.encode(id, forKey: .id)  // null when the request's id could not be read
        try container.encode(error, forKey: .error)
    }

    enum CodingKeys: String, CodingKey { case jsonrpc, id, error }
}
