import Dispatch
import Synchronization

// MARK: - Queue slots

/// Bounds the messages read but not yet handled: the reader takes a slot for each message and waits
/// while none is free; the run loop gives slots back once their messages are handled.
///
/// Slots go back in batches, so that a reader paused behind a full queue (a client that sends
/// thousands of requests without waiting) wakes once per batch rather than once per message; each
/// wake-up is a context switch on both threads. Holding back fewer than a batch never stalls the
/// reader: it waits only when every slot is taken, and then most of them belong to messages still
/// queued, whose handling completes the batch.
final class QueueSlots: Sendable {
    /// How many handled messages' slots go back together.
    static let batch = 32

    private let free: DispatchSemaphore
    /// Slots of handled messages not yet given back; only the run loop changes it.
    private let held = Atomic(0)

    init(count: Int) {
        precondition(count > Self.batch, "a queue no longer than a batch could wait on its own held slots")
        // Made empty, then filled: libdispatch traps when a semaphore is freed below the value it was
        // made with, which this one is whenever the server ends with slots held or messages queued.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<count { free.signal() }
    }

    /// Takes a slot for a message just read, waiting while every slot is taken.
    func take() {
        free.wait()
    }

    /// Gives back the slot of a handled message, with the batch it completes.
    func release() {
        guard held.add(1, ordering: .relaxed).newValue == Self.batch else { return }
        held.store(0, ordering: .relaxed)
        for _ in 0..<Self.batch { free.signal() }
    }
}
