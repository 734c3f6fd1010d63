import CloudNotesProtocol
import Synchronization

// MARK: - Cancellation

/// The requests a client cancelled with `$/cancelRequest`, seen on the reader thread as soon as they arrive.
///
/// A request that has not started yet is answered -32800 when its turn comes; one that runs in the
/// background has its task cancelled and answers -32800 when it stops.
final class CancellationRegistry: Sendable {
    private struct State {
        var cancelled: Set<RequestID> = []
        var running: [RequestID: @Sendable () -> Void] = [:]
    }
    private let state = Mutex(State())

    func cancel(_ id: RequestID) {
        let onCancel = state.withLock { state -> (@Sendable () -> Void)? in
            if let running = state.running[id] { return running }
            state.cancelled.insert(id)
            return nil
        }
        onCancel?()
    }

    /// Whether `id` was cancelled before it started; forgets it either way.
    func takeCancellation(of id: RequestID) -> Bool {
        state.withLock { $0.cancelled.remove(id) != nil }
    }

    /// Routes a later `$/cancelRequest` for `id` to `onCancel`, until `finish(id)`.
    func register(_ id: RequestID, onCancel: @escaping @Sendable () -> Void) {
        state.withLock { $0.running[id] = onCancel }
    }

    func finish(_ id: RequestID) {
        state.withLock { state in
            state.running[id] = nil
            state.cancelled.remove(id)
        }
    }
}
