import CloudNotesTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import CloudNotesStore

/// Counts the commits of one connection.
private final class CommitCounter: TransactionObserver, Sendable {
    let commits = Atomic(0)
    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { true }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) { commits.add(1, ordering: .relaxed) }
    func databaseDidRollback(_ db: Database) {}
}

private struct Refused: Error {}

@Suite("Bursts of text changes")
struct BurstTests {
    @Test("a burst is committed once; each change gets the result it would have had alone, refusals included")
    func oneCommit() throws {
        let store = try MemoStore(path: temporaryStorePath())
        let older = try store.create(text: "older", now: 1, filter: nil).memo
        let newer = try store.create(text: "newer", now: 2, filter: nil).memo
        let counter = CommitCounter()
        store.writer.add(transactionObserver: counter, extent: .observerLifetime)
        let updates: [MemoStore.TextUpdate] = [
            .init(id: older.id, baseVersion: 1) { _ in "older, typed" },
            .init(id: older.id, baseVersion: 1) { _ in "stale" },
            .init(id: older.id, baseVersion: nil) { _ in throw Refused() },
            .init(id: older.id, baseVersion: 2) { $0 + "!" },
            .init(id: older.id, baseVersion: nil) { $0 },
            .init(id: newer.id, baseVersion: nil) { _ in "newer, typed" },
            .init(id: "no such memo", baseVersion: nil) { _ in "x" },
        ]
        let results = try store.update(updates, now: 3, filter: nil)
        #expect(counter.commits.load(ordering: .relaxed) == 1)
        #expect(results.count == updates.count)

        let first = try results[0].get()
        #expect((first.memo.text, first.memo.version, first.indexBefore, first.indexAfter) == ("older, typed", 2, 1, 0))
        #expect(throws: StoreError.self) { try results[1].get() }
        #expect(throws: Refused.self) { try results[2].get() }
        let fourth = try results[3].get()
        #expect((fourth.memo.text, fourth.memo.version, fourth.indexBefore, fourth.indexAfter) == ("older, typed!", 3, 0, 0))
        let same = try results[4].get()
        #expect(!same.changedAnything && same.memo.version == 3)
        let other = try results[5].get()
        #expect((other.indexBefore, other.indexAfter) == (1, 0))
        if case .failure(StoreError.memoNotFound) = results[6] {} else { Issue.record("expected memoNotFound, got \(results[6])") }

        #expect(try store.memo(id: older.id)?.text == "older, typed!")
        #expect(try store.page(filter: nil, offset: 0, limit: 5).map(\.id) == [newer.id, older.id])
    }

    @Test("a failure of the store rolls the whole burst back")
    func rolledBackWhole() throws {
        let store = try MemoStore(path: temporaryStorePath())
        let memo = try store.create(text: "kept", now: 1, filter: nil).memo
        try store.writer.write { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER refuse BEFORE UPDATE OF text ON memo WHEN new.text = CAST('boom' AS BLOB)
                BEGIN SELECT RAISE(ABORT, 'boom'); END
                """)
        }
        #expect(throws: StoreError.self) {
            try store.update([
                .init(id: memo.id, baseVersion: nil) { _ in "typed" },
                .init(id: memo.id, baseVersion: nil) { _ in "boom" },
            ], now: 2, filter: nil)
        }
        let stored = try #require(try store.memo(id: memo.id))
        #expect((stored.text, stored.version) == ("kept", 1))
        #expect(try store.update(id: memo.id, text: "after", baseVersion: 1, now: 3, filter: nil).memo.version == 2)
    }

    @Test("a burst ends after a change that took other processes' changes, so the store is as that change left it")
    func endsAfterChangesElsewhere() throws {
        let path = temporaryStorePath()
        let mine = try MemoStore(path: path)
        let theirs = try MemoStore(path: path)
        let memo = try mine.create(text: "mine", now: 1, filter: nil).memo
        _ = try theirs.create(text: "theirs", now: 2, filter: nil)
        let results = try mine.update([
            .init(id: memo.id, baseVersion: nil) { _ in "one" },
            .init(id: memo.id, baseVersion: nil) { _ in "two" },
        ], now: 3, filter: nil)
        #expect(results.count == 1)
        #expect(try results[0].get().followsChangesElsewhere)
        #expect(try mine.memo(id: memo.id)?.text == "one")
    }
}
