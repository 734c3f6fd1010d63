import CSQLiteLogWrites
import CloudNotesTestSupport
import Foundation
import GRDB
import Testing

@testable import CloudNotesStore

/// A transaction's log frames reach the file in one write when it commits (`CSQLiteLogWrites`).
@Suite("Log writes gathered per transaction")
struct LogWritesTests {
    /// The size of a log frame: its 24-byte header and a 4 KB page.
    private let frameSize = 24 + 4096

    /// A store that never checkpoints, so that its log only grows, and the path of its log.
    private func store() throws -> (MemoStore, LogCheckpointer, log: String) {
        let (store, checkpointer, path) = try storeOnFile()
        return (store, checkpointer, path + "-wal")
    }

    /// The log's bytes, read past SQLite.
    private func bytes(of log: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: log)))
    }

    /// What the store's writer connection's log was asked to write, and wrote.
    private func counts(of store: MemoStore) throws -> cloudnotes_log_write_counts {
        try store.writer.write { db in
            var counts = cloudnotes_log_write_counts()
            try #require(cloudnotes_log_write_counts_of(UnsafeMutableRawPointer(db.sqliteConnection), &counts) == 0)
            return counts
        }
    }

    @Test("a commit is in the log file, commit frame included, when the change returns")
    func commitsReachTheFile() throws {
        let (store, checkpointer, log) = try store()
        var text = String(repeating: "회의 meeting notes\n", count: 5_000)
        let id = try store.create(text: text, now: 1, filter: nil).memo.id
        for i in 0..<5 {
            text += "x"
            _ = try store.update(id: id, text: text, baseVersion: nil, now: Int64(2 + i), filter: nil)
            let frames = Int(checkpointer.pagesInLog)
            let file = try bytes(of: log)
            #expect(file.count >= 32 + frames * frameSize, "\(frames) frames committed, \(file.count) bytes in the file")
            // The last frame's header holds the database's size in pages: the commit marker.
            let header = 32 + (frames - 1) * frameSize
            try #require(file.count >= header + 8)
            #expect(file[(header + 4)..<(header + 8)].contains { $0 != 0 }, "the commit frame is in the file")
        }
    }

    @Test("a keystroke in a long memo reaches the log in one or two writes, not two per page")
    func fewWritesPerCommit() throws {
        let (store, _, _) = try store()
        var text = String(repeating: "회의 meeting notes\n", count: 5_000)
        let id = try store.create(text: text, now: 1, filter: nil).memo.id
        let before = try counts(of: store)
        for i in 0..<20 {
            text += "x"
            _ = try store.update(id: id, text: text, baseVersion: nil, now: Int64(2 + i), filter: nil)
        }
        let after = try counts(of: store)
        let asked = after.writesAsked - before.writesAsked
        let made = after.writesMade - before.writesMade
        #expect(asked >= 20 * 50, "SQLite asked for \(asked) writes")
        #expect(made <= 20 * 2, "\(made) writes made for \(asked) asked")
    }

    @Test("frames of a transaction rolled back are never written over another connection's commit")
    func rolledBackFramesStayBehind() throws {
        let (store, checkpointer, _) = try store()
        let path = try #require(store.path)
        _ = try store.create(text: "first", now: 0, filter: nil)
        // A connection whose cache holds a few pages spills a large transaction's frames into the log
        // before it ends; this one then rolls back. The log was copied whole, so the transaction starts
        // it again and its rollback reads no page from it (such a read would write the frames early).
        let spiller = try DatabaseQueue(path: path)
        try spiller.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA cache_size = 4") }
        checkpointer.checkpointNow()
        struct Abandoned: Error {}
        #expect(throws: Abandoned.self) {
            try spiller.write { db in
                try db.execute(sql: "CREATE TABLE filler (bytes BLOB)")
                for _ in 0..<30 { try db.execute(sql: "INSERT INTO filler VALUES (randomblob(4000))") }
                throw Abandoned()
            }
        }
        // Another connection commits where those frames were.
        var texts: [String: String] = [:]
        for i in 0..<10 {
            let text = "memo \(i)\n" + String(repeating: "note \(i) ", count: 900)
            texts[try store.create(text: text, now: Int64(i), filter: nil).memo.id] = text
        }
        // The first connection reads and writes the log again: anything it still held would land now.
        try spiller.write { db in try db.execute(sql: "CREATE TABLE other (x)") }
        _ = try spiller.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo") }
        let fresh = try DatabaseQueue(path: path)
        #expect(try fresh.read { db in try String.fetchOne(db, sql: "PRAGMA integrity_check") } == "ok")
        for (id, text) in texts {
            let stored = try fresh.read { db in try Data.fetchOne(db, sql: "SELECT text FROM memo WHERE id = ?", arguments: [id]) }
            #expect(stored.map { String(decoding: $0, as: UTF8.self) } == text)
        }
    }
}
