import Dispatch
import Synchronization

// MARK: - Queue slots

/// Bounds the messages read but not yet handled: the reader takes a slot for each message and waits
/// while none is free; the run loop gives slots back once their messages are handled.
///
/// Slots go back in batches, so that a reader paused behind a full queue (a client that sends
/// thousands of requests without waiting) wakes once per batch rather than once per message; each
/// wake-up is a context switch on both threads.
final class QueueSlots: Sendable {
    /// How many handled messages' slots are held before they go back together.
    static let batch = 32

    private let free: DispatchSemaphore
    /// Slots of handled messages not yet given back; only the run loop changes it.
    private let held = Atomic(0)

    init(count: Int) {
        free = DispatchSemaphore(value: count)
    }

    /// Takes a slot for a message just read, waiting while every slot is taken.
    func take() {
        free.wait()
    }

    /// Gives back the slot of a handled message: with the batch, or at once when nothing waits (so
    /// that a reader can never wait on slots that an idle run loop holds).
    func release(queueIsEmpty: Bool) {
        let count = held.add(1, ordering: .relaxed).newValue
        guard count >= Self.batch || queueIsEmpty else { return }
        held.store(0, ordering: .relaxed)
        for _ in 0..<count { free.signal() }
    }
}
