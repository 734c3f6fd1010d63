import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesTransport
import Synchronization

// MARK: - Bursts of text changes

/// Requests that change a memo's text, taken together when they arrived behind each other (rule C2 of
/// `Server`): a client typing faster than each change can be committed gets its changes committed a
/// run at a time, each still announced and answered on its own, in order. A change that comes alone is
/// a burst of one, on the same path.
enum TextChangeBurst {
    /// At most this many requests go together: each waits for the commit of the whole run.
    static let maxRequests = 64
    /// And about this many bytes of params (at least two requests): the run's texts are held until its replies are written.
    static let maxParamsBytes = 4 << 20

    /// `first` and the messages queued behind it that can join it in a burst; the first that cannot
    /// is left in `held`. Only messages already waiting join (`waiting` counts them, `first` included):
    /// a burst never waits for the client.
    static func take(
        _ first: IncomingMessage, queue: inout AsyncStream<Server.Event>.Iterator, held: inout Server.Event?,
        waiting: borrowing Atomic<Int>
    ) async -> [IncomingMessage] {
        var burst = [first]
        guard canJoin(first) else { return burst }
        var bytes = paramsBytes(first)
        while burst.count < maxRequests, bytes < maxParamsBytes, waiting.load(ordering: .relaxed) > burst.count,
              let next = await queue.next() {
            guard case .message(let queued) = next, canJoin(queued) else {
                held = next
                break
            }
            burst.append(queued)
            bytes += paramsBytes(queued)
        }
        return burst
    }

    /// Whether `message` can join a burst: a text change, whatever its params (a bad one is refused in its turn).
    static func canJoin(_ message: IncomingMessage) -> Bool {
        guard case .request(_, let method, _, _) = message else { return false }
        return method == UpdateRequest.method || method == EditRequest.method
    }

    /// The size that counts against `maxParamsBytes`.
    static func paramsBytes(_ message: IncomingMessage) -> Int {
        guard case .request(_, _, _, let size) = message else { return 0 }
        return size
    }
}

extension Dispatcher {
    /// Handles text changes (`TextChangeBurst.canJoin`) in order: one, or a burst of them.
    func handleBurst(_ messages: [IncomingMessage]) async {
        guard case .running(let session) = lifecycle else {
            for message in messages { _ = await handle(message) }  // refused by the lifecycle
            return
        }
        if messages.count > 1 { logger.debug("\(messages.count) text changes arrived together") }
        // Decoded and waiting for the split view, which answers them together.
        var pending: [(id: RequestID, request: any TextChangeRequest)] = []
        for case .request(let id, _, let params, _) in messages {
            do throws(ResponseError) {
                if cancellations.takeCancellation(of: id) { throw .cancelled }
                guard let request = try params.get() as? any TextChangeRequest else {
                    throw .internalError("a text change decoded as another type")
                }
                pending.append((id, request))
            } catch {
                // Refused in its turn, after the ones before it.
                await changeTexts(pending, session: session)
                pending = []
                writer.sendError(error, id: id)
            }
        }
        await changeTexts(pending, session: session)
        noteLocalEdit()
    }

    /// Passes `pending` to the split view, which answers each.
    private func changeTexts(_ pending: [(id: RequestID, request: any TextChangeRequest)], session: Session) async {
        guard !pending.isEmpty else { return }
        let writer = writer
        let ids = pending.map(\.id)
        await session.mediator.changeTexts(pending.map(\.request)) { index, reply in
            switch reply {
            case .success(let result): writer.sendResult(result, id: ids[index])
            case .failure(let error): writer.sendError(error, id: ids[index])
            }
        }
    }
}
