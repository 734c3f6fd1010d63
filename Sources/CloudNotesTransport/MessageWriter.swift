import CloudNotesJSON
import CloudNotesProtocol
import Foundation
import Synchronization

// MARK: - Writing messages

/// Writes JSON-RPC messages to a file descriptor, in the framing the client speaks (one per line until
/// told otherwise); safe to call from any thread.
///
/// Between `startBatch()` and `finishBatch()` messages are gathered and written together (in the order
/// they were sent), so that a request's notifications and response, or the responses to a burst of
/// pipelined requests, cost one `write(2)` and wake the client once, not once per message.
public final class MessageWriter: Sendable {
    let fileDescriptor: Int32
    private let state = Mutex(State())
    /// Whether messages go out with a `Content-Length` header instead of a newline.
    private let usesContentLength = Atomic(false)
    /// Keys come out in declaration order: clients must not depend on key order.
    private let encoder = StreamingJSONEncoder()

    /// A batch is written early once it holds this many bytes…
    static let maxBatchBytes = 1 << 16
    /// … or once its first message has waited this long, so that a slow request behind a burst does
    /// not hold back the responses before it.
    static let maxBatchDelay = Duration.milliseconds(1)
    private static let delayQueue = DispatchQueue(label: "cloudnotes.output-batch")

    private struct State: ~Copyable {
        var pending: [UInt8] = []
        var batching = false
        /// When the oldest message in `pending` was sent.
        var pendingSince: ContinuousClock.Instant?
        /// Whether a delayed flush is scheduled (see `continueBatch()`).
        var timerArmed = false
    }

    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    /// Writes every later message in `framing`: the one the client's first message came in.
    public func use(_ framing: Framing) {
        usesContentLength.store(framing == .contentLength, ordering: .relaxed)
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

    // MARK: - Batches

    /// Gathers the messages sent from now on until `finishBatch()`.
    public func startBatch() {
        state.withLock { $0.batching = true }
    }

    /// Writes the gathered messages, and each later one as it is sent.
    public func finishBatch() {
        state.withLock { state in
            state.batching = false
            flush(&state)
        }
    }

    // MARK: - Writing

    /// Writes a message another library encoded (the MCP SDK's), framed as every other message.
    public func sendEncoded(_ message: some Collection<UInt8>) {
        write(encoded: Array(message))
    }

    /// Encodes and writes one message; a message that cannot be encoded becomes an internal error.
    func write(_ message: some Encodable) {
        let data: [UInt8]
        do {
            data = try encoder.encode(message)
        } catch {
            data = Array(#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error: a reply could not be encoded"}}"#.utf8)
        }
        write(encoded: data)
    }

    /// Frames and writes one encoded message, or adds it to the batch.
    private func write(encoded message: [UInt8]) {
        var data = message
        if usesContentLength.load(ordering: .relaxed) {
            data.insert(contentsOf: "Content-Length: \(data.count)\r\n\r\n".utf8, at: 0)
        } else {
            data.append(UInt8(ascii: "\n"))
        }
        state.withLock { state in
            guard state.batching else {
                // Nothing is pending outside a batch (finishing one flushes it): write straight away.
                writeAll(data)
                return
            }
            if state.pending.isEmpty {
                state.pending = data
                state.pendingSince = .now
            } else if data.count >= Self.maxBatchBytes {
                // Too long to wait for company (a reply that carries a long memo): written at once with
                // what waits before it, in one call, rather than copied behind it first.
                writeAll(state.pending, then: data)
                state.pending.removeAll(keepingCapacity: state.pending.count <= Self.maxBatchBytes)
                state.pendingSince = nil
                return
            } else {
                state.pending.append(contentsOf: data)
            }
            if state.pending.count >= Self.maxBatchBytes { flush(&state) }
        }
    }

    /// Keeps the batch open across requests (more wait to be handled), and makes sure what it holds is
    /// written within `maxBatchDelay` even if the next request is slow.
    public func continueBatch() {
        state.withLock { state in
            guard state.batching, let since = state.pendingSince, !state.timerArmed else { return }
            state.timerArmed = true
            Self.delayQueue.asyncAfter(deadline: .now() + .microseconds(Int(Self.maxBatchDelay / .microseconds(1)))) {
                self.flush(ifPendingSince: since)
            }
        }
    }

    /// Writes a batch that has waited its time, unless it was written since.
    private func flush(ifPendingSince since: ContinuousClock.Instant) {
        state.withLock { state in
            state.timerArmed = false
            if state.pendingSince == since { flush(&state) }
        }
    }

    private func flush(_ state: inout State) {
        guard !state.pending.isEmpty else { return }
        writeAll(state.pending)
        state.pending.removeAll(keepingCapacity: state.pending.count <= Self.maxBatchBytes)
        state.pendingSince = nil
    }

    /// Writes every byte, unless the client went away (the read side then sees end of input).
    private func writeAll(_ bytes: [UInt8]) {
        writeAll(bytes, then: [])
    }

    /// Writes every byte of `first`, then of `second`, in as few calls as the pipe takes (`writev`).
    private func writeAll(_ first: [UInt8], then second: [UInt8]) {
        first.withUnsafeBytes { first in
            second.withUnsafeBytes { second in
                var parts = [first, second].filter { !$0.isEmpty }
                while !parts.isEmpty {
                    var vectors = parts.map { iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count) }
                    var written = writev(fileDescriptor, &vectors, Int32(vectors.count))
                    if written < 0 {
                        if errno == EINTR { continue }
                        return
                    }
                    // A partial write: drop what went, and carry on from the byte it stopped at.
                    while written > 0 {
                        let taken = min(written, parts[0].count)
                        parts[0] = UnsafeRawBufferPointer(rebasing: parts[0][taken...])
                        written -= taken
                        if parts[0].isEmpty { parts.removeFirst() }
                    }
                }
            }
        }
    }
}

// MARK: - Outgoing envelopes

/// A notification as it goes out: the envelope around `params`.
struct OutgoingNotification<Params: Encodable>: Encodable {
    var jsonrpc = "2.0"
    var method: String
    var params: Params
}

/// A successful response as it goes out: the envelope around `result`.
struct OutgoingResult<Result: Encodable>: Encodable {
    var jsonrpc = "2.0"
    var id: RequestID
    var result: Result
}

/// An error response as it goes out; `id` is null when the request's id could not be read.
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
