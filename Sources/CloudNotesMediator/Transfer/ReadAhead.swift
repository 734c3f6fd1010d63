import Dispatch
import Foundation
import Synchronization

// MARK: - Reading ahead

/// Produces elements on a thread of its own, one ahead of the consumer: while the consumer works on
/// one element, the next is being made.
///
/// An import alternates between reading memos (decoding the file's JSON, deriving titles) and writing
/// them to the store; read one ahead, the two overlap on two CPUs. At most one element waits, so the
/// memory held stays bounded: the element consumed, the one waiting, the one being made.
///
/// The producer runs until it returns nil or throws; the consumer then gets that nil or error, again at
/// every later call. A consumer that gives up before then calls `stop()`, which ends the thread once
/// the element under way is made.
final class ReadAhead<Element: Sendable>: Sendable {
    private let state = Mutex(State())
    /// Signalled when the producer has put an element (or its end) in `state.ready`.
    private let produced = DispatchSemaphore(value: 0)
    /// Signalled when the consumer has taken it, or has stopped.
    private let taken = DispatchSemaphore(value: 0)

    private struct State: ~Copyable {
        /// What the producer made and the consumer has not taken.
        var ready: Result<Element?, any Error>?
        /// The producer's nil or error, once the consumer has taken it: every later call answers it.
        var end: Result<Element?, any Error>?
        var isStopped = false
    }

    /// Starts the thread, named `label`, that calls `produce` until it returns nil or throws.
    init(label: String, _ produce: @escaping @Sendable () throws -> Element?) {
        // The thread holds this object until its loop ends.
        let thread = Thread { [self] in produceUntilEnd(produce) }
        thread.name = label
        thread.start()
    }

    /// The next element, waiting for it if it is not made yet; nil at the end. Throws what the
    /// producer threw.
    func next() throws -> Element? {
        if let end = state.withLock({ $0.end }) { return try end.get() }
        produced.wait()
        let result = state.withLock { state in
            let result = state.ready ?? .success(nil)
            state.ready = nil
            if case .success(.some) = result {} else { state.end = result }
            return result
        }
        taken.signal()
        return try result.get()
    }

    /// Ends the producer's thread without waiting for it: what it makes from now on is dropped.
    func stop() {
        state.withLock { $0.isStopped = true }
        taken.signal()
    }

    // MARK: - The producer's thread

    private func produceUntilEnd(_ produce: () throws -> Element?) {
        while true {
            let result = Result { try produce() }
            let isStopped = state.withLock { state in
                if !state.isStopped { state.ready = result }
                return state.isStopped
            }
            if isStopped { return }
            produced.signal()
            taken.wait()
            guard case .success(.some) = result, !state.withLock({ $0.isStopped }) else { return }
        }
    }
}
