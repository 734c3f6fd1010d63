import Dispatch
import Foundation
import Synchronization

// MARK: - Reading ahead

/// Produces elements on a thread of its own, up to `depth` ahead of its one consumer: while the consumer
/// works on an element, the next ones are being made.
///
/// An import alternates between reading memos (decoding the file's JSON, deriving titles) and writing
/// them to the store; read ahead, the two overlap on two CPUs. How long each takes varies from chunk to
/// chunk (a chunk of a few hundred short memos costs the reader more than the writer, one of two long
/// memos the other way round): one element ahead, each side waited for the other on every chunk where
/// it was the quicker, and in `perf record` of an import of 100,000 memos the writing thread was busy
/// 55–75% of the time its chunks took; four ahead, 85–100%. The quicker side builds a lead that the
/// slower one then uses. The producer makes an element only while fewer than `depth` wait to be taken,
/// so `depth + 1` are held at most: the one the consumer works on, and those made (or being made)
/// meanwhile; and one given back, until the producer wakes for the next.
///
/// What the consumer is done with it can give back (`giveBack`), so that the producer's thread lets go
/// of it: memory is then freed by the thread that allocated it. An import's writing thread freed the
/// memos that the reading thread had allocated, and each such `free` took the lock of the reading
/// thread's `malloc` arena, which that thread held for its own allocations: thousands of waits an import.
///
/// The producer runs until it returns nil or throws; the consumer then gets that nil or error, after the
/// elements made before it, and at every later call. A consumer that gives up before then calls `stop()`
/// (dropping the last reference does too), which ends the thread once the element under way is made, and
/// lets go of what it holds.
final class ReadAhead<Element: Sendable>: Sendable {
    private let core: Core

    /// Starts the thread, named `label`, that calls `produce` until it returns nil or throws, or until
    /// `stop()`, keeping at most `depth` (at least 1) elements made and not taken. The thread runs at
    /// utility priority, as the server's other long work (an import) does, so that it leaves the CPUs to
    /// requests.
    init(label: String, depth: Int = 1, _ produce: @escaping @Sendable () throws -> Element?) {
        let core = Core(depth: max(1, depth))
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

    /// Ends the producer's thread without waiting for it: what it made and makes from now on is dropped,
    /// and `next()` answers nil.
    func stop() { core.stop() }

    /// Hands `spent`, an element the consumer is done with, to the producer's thread, which lets go of
    /// it before making its next element; once that thread has ended, or after `stop()`, it is let go of
    /// here.
    func giveBack(_ spent: Element) { core.giveBack(spent) }

    // MARK: - Between the two threads

    private final class Core: Sendable {
        private let state = Mutex(State())
        /// One signal for each result the producer put in `state.ready`, and one from `stop()`.
        private let produced = DispatchSemaphore(value: 0)
        /// One signal for each free place among the `depth` (at first all of them), and one from `stop()`.
        private let room = DispatchSemaphore(value: 0)

        init(depth: Int) {
            // Signalled rather than made with the value: libdispatch stops the process when a semaphore
            // goes away with less than the value it was made with (here, elements made and not taken).
            for _ in 0..<depth { room.signal() }
        }

        private struct State: ~Copyable {
            /// What the producer made and the consumer has not taken, oldest first: elements, and last
            /// perhaps the producer's nil or error.
            var ready: [Result<Element?, any Error>] = []
            /// The producer's nil or error once the consumer has taken it, or nil after `stop()`: every
            /// later call answers it.
            var end: Result<Element?, any Error>?
            var isStopped = false
            /// Elements given back, for the producer's thread to let go of.
            var spent: [Element] = []
            /// The producer's loop has ended: nobody takes `spent`.
            var producerEnded = false

            /// The elements given back, now the caller's alone.
            mutating func takeSpent() -> [Element] {
                defer { spent = [] }
                return spent
            }
        }

        func next() throws -> Element? {
            if let end = state.withLock({ $0.end }) { return try end.get() }
            produced.wait()
            let result = state.withLock { state in
                if let end = state.end { return end }  // stopped while waiting
                let result = state.ready.isEmpty ? .success(nil) : state.ready.removeFirst()
                if case .success(.some) = result {} else { state.end = result }
                return result
            }
            room.signal()
            return try result.get()
        }

        func giveBack(_ spent: Element) {
            // Once nobody takes it, the caller's reference is the last, and lets go of it here.
            state.withLock { state in
                if !state.producerEnded && !state.isStopped { state.spent.append(spent) }
            }
        }

        func stop() {
            let spent = state.withLock { state in
                state.isStopped = true
                state.ready = []
                if state.end == nil { state.end = .success(nil) }
                return state.takeSpent()
            }
            _ = consume spent  // outside the lock
            room.signal()  // a producer waiting for room
            produced.signal()  // a consumer waiting for an element
        }

        func produceUntilEnd(_ produce: () throws -> Element?) {
            defer {
                let spent = state.withLock { state in
                    state.producerEnded = true
                    return state.takeSpent()
                }
                _ = consume spent
            }
            while true {
                room.wait()
                // Let go of what came back, here, before the lock is taken for anything else.
                let (stopped, spent) = state.withLock { ($0.isStopped, $0.takeSpent()) }
                _ = consume spent
                if stopped { return }
                let result = Result { try produce() }
                let isStopped = state.withLock { state in
                    if !state.isStopped { state.ready.append(result) }
                    return state.isStopped
                }
                if isStopped { return }
                produced.signal()
                guard case .success(.some) = result else { return }
            }
        }
    }
}
