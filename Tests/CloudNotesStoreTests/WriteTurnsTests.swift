import CloudNotesTestSupport
import Foundation
import Synchronization
import Testing

@testable import CloudNotesStore

/// The stores of one process on one file get the write lock in the order they ask for it, not by
/// SQLite's polling, which let a keystroke wait behind a sync's transactions for seconds.
@Suite("Turns at the write lock")
struct WriteTurnsTests {
    /// What the writers did, in the order they did it.
    private final class Log: Sendable {
        private let state = Mutex<[String]>([])
        func append(_ entry: String) { state.withLock { $0.append(entry) } }
        var entries: [String] { state.withLock { $0 } }
    }

    @Test("a store opened besides another waits for its turn, and writes before a later write of the other")
    func turnsAreTakenInOrder() async throws {
        let store = try MemoStore(path: temporaryStorePath())
        let beside = try MemoStore(besides: store)
        #expect(beside.writeTurns === store.writeTurns)
        let order = Log()
        let release = DispatchSemaphore(value: 0)
        let first = runOnThread {
            try store.write { _ in
                release.wait()
                order.append("first")
            }
        }
        #expect(try await waitUntil { store.writeTurns.askedFor == 1 })
        // Asked for while the first holds the lock: the other store's write, then this store's next one.
        // Each writer notes its turn inside its transaction: after it, the next may already be writing.
        let besides = runOnThread {
            try beside.write { _ in order.append("besides") }
        }
        #expect(try await waitUntil { store.writeTurns.askedFor == 2 })
        let later = runOnThread {
            try store.write { _ in order.append("later") }
        }
        #expect(try await waitUntil { store.writeTurns.askedFor == 3 })
        release.signal()
        for writer in [first, besides, later] { try writer.wait() }
        #expect(order.entries == ["first", "besides", "later"])
        #expect(store.writeTurns.askedFor == 0)
    }

    @Test("a write that fails gives its turn to the next")
    func failedWriteGivesTurnOn() throws {
        let store = try MemoStore(path: temporaryStorePath())
        #expect(throws: StoreError.self) {
            try store.write { _ in throw StoreError.cancelled }
        }
        #expect(store.writeTurns.askedFor == 0)
        _ = try store.create(text: "after a failed write", now: 1, filter: nil)
    }
}
