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

/// Counts, through a temporary trigger on the store's writer connection, how often a row of `memo` is
/// written; returns the count so far.
private func countingRowWrites(of store: MemoStore) throws -> () throws -> Int {
    try store.writer.write { db in
        try db.execute(sql: """
            CREATE TEMP TABLE rowWrites (count INTEGER NOT NULL);
            INSERT INTO rowWrites VALUES (0);
            CREATE TEMP TRIGGER countRowWrites AFTER UPDATE ON main.memo BEGIN UPDATE rowWrites SET count = count + 1; END
            """)
    }
    return { try store.writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "SELECT count FROM rowWrites") ?? -1 } }
}

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

    // MARK: - One write of a row per run

    @Test("a run of changes to one memo writes its row once, as the run's last change left it", arguments: [false, true])
    func oneRowWritePerRun(orderLoaded: Bool) throws {
        let path = temporaryStorePath()
        let store = try MemoStore(path: path)
        let a = try store.create(text: "a", now: 1, filter: nil).memo
        let b = try store.create(text: "b", now: 2, filter: nil).memo
        // Positions come from the list order in memory once it is loaded, else from counting rows.
        if orderLoaded { try store.loadListOrder() }
        let rowWrites = try countingRowWrites(of: store)
        let results = try store.update([
            .init(id: a.id, baseVersion: 1) { $0 + "1" },
            .init(id: a.id, baseVersion: 2) { $0 + "2" },
            .init(id: a.id, baseVersion: 3) { $0 + "3" },
            .init(id: b.id, baseVersion: 1) { $0 + "1" },
            .init(id: b.id, baseVersion: nil) { $0 + "2" },
            .init(id: a.id, baseVersion: 4) { $0 + "4" },
        ], now: 3, filter: nil).map { try $0.get() }
        #expect(try rowWrites() == 3)  // a, then b, then a again
        let seqs = results.map(\.memo.seq)
        #expect(zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }, "sequence numbers \(seqs)")
        #expect(results.map(\.memo.version) == [2, 3, 4, 2, 3, 5])
        #expect(results.map(\.indexAfter) == [0, 0, 0, 0, 0, 0])
        #expect(results.map(\.indexBefore) == [1, 0, 0, 1, 0, 1])

        // The file holds what the last change of each memo left, at its sequence number.
        let reopened = try MemoStore(path: path)
        let storedA = try #require(try reopened.memo(id: a.id))
        let storedB = try #require(try reopened.memo(id: b.id))
        #expect((storedA.text, storedA.version, storedA.seq) == ("a1234", 5, results[5].memo.seq))
        #expect((storedB.text, storedB.version, storedB.seq) == ("b12", 3, results[4].memo.seq))
        #expect(try reopened.page(filter: nil, offset: 0, limit: 5).map(\.id) == [a.id, b.id])
        #expect(try reopened.create(text: "c", now: 4, filter: nil).memo.seq == results[5].memo.seq + 1)
    }

    @Test("under a search filter, each change of a run is written as it is made, and the filtered list follows it",
          arguments: [true, false])
    func writtenAsMadeUnderFilter(listedBefore: Bool) throws {
        let store = try MemoStore(path: temporaryStorePath())
        let memo = try store.create(text: "apple", now: 1, filter: nil).memo
        _ = try store.create(text: "banana", now: 2, filter: nil)
        let apple = try #require(SearchFilter("apple"))
        // Listed or not, the filtered list in memory is built from the rows, by the run's first change at the latest.
        if listedBefore { #expect(try store.page(filter: apple, offset: 0, limit: 5).map(\.id) == [memo.id]) }
        let rowWrites = try countingRowWrites(of: store)
        let results = try store.update([
            .init(id: memo.id, baseVersion: nil) { _ in "pear" },
            .init(id: memo.id, baseVersion: nil) { _ in "apple pie" },
            .init(id: memo.id, baseVersion: nil) { _ in "plum" },
        ], now: 3, filter: apple).map { try $0.get() }
        #expect(try rowWrites() == 3)
        #expect(results.map(\.indexBefore) == [0, nil, 0])
        #expect(results.map(\.indexAfter) == [nil, 0, nil])
        #expect(try store.page(filter: apple, offset: 0, limit: 5).isEmpty)
    }

    @Test("a filtered list kept in memory gets each change of a run right, though the run itself has no filter")
    func filteredOrderKeptAside() throws {
        let store = try MemoStore(path: temporaryStorePath())
        let memo = try store.create(text: "apple", now: 1, filter: nil).memo
        let apple = try #require(SearchFilter("apple"))
        #expect(try store.page(filter: apple, offset: 0, limit: 5).map(\.id) == [memo.id])
        _ = try store.update([
            .init(id: memo.id, baseVersion: nil) { _ in "apple pie" },
            .init(id: memo.id, baseVersion: nil) { _ in "pear" },
        ], now: 2, filter: nil).map { try $0.get() }
        #expect(try store.page(filter: apple, offset: 0, limit: 5).isEmpty)
        #expect(try store.page(filter: nil, offset: 0, limit: 5).map(\.id) == [memo.id])
    }

    @Test("a run of changes to an indexed memo leaves the full-text index sound and finds the last text")
    func indexAfterRun() throws {
        let store = try MemoStore(path: temporaryStorePath())
        let memo = try store.create(text: "apple", now: 1, filter: nil).memo
        try store.indexEverything()
        _ = try store.update([
            .init(id: memo.id, baseVersion: nil) { _ in "pear" },
            .init(id: memo.id, baseVersion: nil) { _ in "pear tart" },
        ], now: 2, filter: nil).map { try $0.get() }
        try store.indexEverything()
        try store.writer.write { db in
            try db.execute(sql: "INSERT INTO memo_fts(memo_fts, rank) VALUES ('integrity-check', 1)")
        }
        #expect(try store.page(filter: #require(SearchFilter("tart")), offset: 0, limit: 5).map(\.id) == [memo.id])
        #expect(try store.page(filter: #require(SearchFilter("apple")), offset: 0, limit: 5).isEmpty)
    }
}
