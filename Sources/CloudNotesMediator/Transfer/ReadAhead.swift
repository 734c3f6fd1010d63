import Dispatch
import Foundation
import Synchronization

// MARK: - Reading ahead

/// Produces elements on a thread of its own, one ahead of its one consumer: while the consumer works on
/// an element, the next is being made.
///
/// An import alternates between reading memos (decoding the file's JSON, deriving titles) and writing
/// them to the store; read one ahead, the two overlap on two CPUs. The producer makes the next element
/// only once the consumer has taken the one before, so two elements are held at most: the one the
/// consumer works on, and the one made (or being made) meanwhile.
///
/// The producer runs until it returns nil or throws; the consumer then gets that nil or error, at every
/// later call too. A consumer that gives up before then calls `stop()` (dropping the last reference
/// does too), which ends the thread once the element under way is made, and lets go of what it holds.
final class ReadAhead<Element: Sendable>: Sendable {
    private let core: Core

    /// Starts the thread, named `label`, that calls `produce` until it returns nil or throws, or until
    /// `stop()`. The thread runs at utility priority, as the server's other long work (an import)
    /// does, so that it leaves the CPUs to requests.
    init(label: String, _ produce: @escaping @Sendable () throws -> Element?) {
        let core = Core()
        self.core = core
        // The thread holds the core, not this object, so that dropping this object stops it.
        let thread = Thread { core.produceUntilEnd(produce) }
        thread.name = label
        thread.qualityOfService = .utility
        thread.start()
    }

    deinit { core.stop() }

    /// The next element, waiting for it if it is not made yet; nil at the end or after `stop()`.
    /// Throws what the producer threw.
    func next() throws -> Element? { try core.next() }

    /// Ends the producer's thread without waiting for it: what it makes from now on is dropped, and
    /// `next()` answers nil.
    func stop() { core.stop() }

    // MARK: - Between the two threads

    private final class Core: Sendable {
        private let state = Mutex(State())
        /// Signalled when the producer has put an element (or its end) in `state.ready`, and by `stop()`.
        private let produced = DispatchSemaphore(value: 0)
        /// Signalled when the consumer has taken it, and by `stop()`.
        private let taken = DispatchSemaphore(value: 0)

        private struct State: ~Copyable {
            /// What the producer made and the consumer has not taken.
            var ready: Result<Element?, any Error>?
            /// The producer's nil or error once the consumer has taken it, or nil after `stop()`: every
            /// later call answers it.
            var end: Result<Element?, any Error>?
            var isStopped = false
        }

        func next() throws -> Element? {
            if let end = state.withLock({ $0.end }) { return try end.get() }
            produced.wait()
            let result = state.withLock { state in
                if let end = state.end { return end }  // stopped while waiting
                let result = state.ready ?? .success(nil)
                state.ready = nil
                if case .success(.some) = result {} else { state.end = result }
                return result
            }
            taken.signal()
            return try result.get()
        }

        func stop() {
            state.withLock { state in
                state.isStopped = true
                state.ready = nil
                if state.end == nil { state.end = .success(nil) }
            }
            taken.signal()  // a producer waiting for its element to be taken
            produced.signal()  // a consumer waiting for an element
        }

        func produceUntilEnd(_ produce: () throws -> Element?) {
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
}
