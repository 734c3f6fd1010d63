import GRDB
import Testing

@testable import CloudNotesStore

@Suite("Statements without triggers")
struct WithoutTriggersTests {
    struct Failure: Error {}

    @Test("a statement prepared before runs without triggers inside, with them again after, also after a throw")
    func triggersComeBack() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE item (x INTEGER);
                CREATE TABLE log (x INTEGER);
                CREATE TRIGGER item_log AFTER INSERT ON item BEGIN INSERT INTO log VALUES (new.x); END;
                """)
            // One cached statement throughout: SQLite must prepare it again at each change of the setting.
            let insert = try db.cachedStatement(sql: "INSERT INTO item VALUES (?)")
            try insert.execute(arguments: [1])
            try db.withoutTriggers { try insert.execute(arguments: [2]) }
            try insert.execute(arguments: [3])
            #expect(throws: Failure.self) {
                try db.withoutTriggers {
                    try insert.execute(arguments: [4])
                    throw Failure()
                }
            }
            try insert.execute(arguments: [5])
            #expect(try Int.fetchAll(db, sql: "SELECT x FROM log ORDER BY x") == [1, 3, 5])
            #expect(try Int.fetchAll(db, sql: "SELECT x FROM item ORDER BY x") == [1, 2, 3, 4, 5])
        }
    }

    @Test("after an import, finished or failed, the store's triggers keep the full-text index up to date")
    func importLeavesTriggersOn() throws {
        let store = try MemoStore()
        func matches(_ text: String) throws -> Int? {
            try store.writer.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM memo_fts WHERE memo_fts MATCH ?", arguments: ["\"\(text)\""])
            }
        }
        _ = try store.importMemos((0..<50).map { MemoStore.NewMemo(text: "imported \($0)", modifiedAt: 1_000) })
        let first = try store.create(text: "written after an import", now: 2_000, filter: nil).memo
        var chunks = [[MemoStore.NewMemo(text: "imported", modifiedAt: 1_000)]]
        #expect(throws: Failure.self) {
            _ = try store.importMemos(nextChunk: {
                guard let chunk = chunks.popLast() else { throw Failure() }
                return chunk
            })
        }
        let second = try store.create(text: "written after a failed import", now: 2_001, filter: nil).memo
        // Indexing sets `indexed` (trigger memo_fts_update), deleting removes (memo_fts_delete).
        while try store.indexPendingMemos(byteBudget: 64 << 20) > 0 {}
        #expect(try matches("imported 7") == 1)
        #expect(try matches(first.text) == 1)
        #expect(try matches(second.text) == 1)
        _ = try store.delete(id: second.id, now: 2_002, filter: nil)
        #expect(try matches(second.text) == 0)
        #expect(try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo_fts_docsize") } == 51)
    }
}
