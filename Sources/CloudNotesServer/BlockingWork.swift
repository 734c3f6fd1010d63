import Dispatch
import Synchronization

// MARK: - Blocking work

/// Runs long blocking work (a whole import, an export) on a dispatch queue rather than on the
/// concurrency pool, whose two threads on a small machine must stay free for interactive requests.
enum BlockingWork {
    private static let queue = DispatchQueue(label: "cloudnotes.blocking-work", qos: .utility, attributes: .concurrent)

    /// Runs `body` off the pool; `body` polls its argument to learn that the calling task was cancelled.
    static func run<T: Sendable>(_ body: @escaping @Sendable (_ isCancelled: @escaping @Sendable () -> Bool) throws -> T) async throws -> T {
        let box = CancelFlag()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                queue.async {
                    continuation.resume(with: Result { try body { box.isSet } })
                }
            }
        } onCancel: {
            box.set()
        }
    }
}

/// A flag that one thread sets and another polls.
final class CancelFlag: Sendable {
    private let flag = Atomic(false)
    var isSet: Bool { flag.load(ordering: .acquiring) }
    func set() { flag.store(true, ordering: .releasing) }
}
