import CSQLiteLogWrites
import CloudNotesTestSupport
import Foundation
import GRDB
import GRDBSQLite
import Testing

@testable import CloudNotesStore

/// No connection, of this process or another CloudNotes process, starts the write-ahead log again while a
/// checkpoint is under way (the turns of `CSQLiteLogWrites`), which keeps the store clear of SQLite's WAL-reset
/// race (https://sqlite.org/wal.html#walresetbug; this machine's SQLite 3.40.1 has it).
///
/// Serialized: the window's hook is the whole process's.
@Suite("Checkpoints in turn with the log's restarts", .serialized)
struct CheckpointTurnsTests {
    @Test("a restart inside another connection's checkpoint appends instead, and no committed page is lost")
    func restartInsideACheckpoint() throws {
        try #require(cloudnotes_combine_log_writes() == SQLITE_OK)
        let folder = try temporaryFolder()
        var configuration = Configuration()
        // Every checkpoint here is the test's own.
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA wal_autocheckpoint = 0") }
        let checkpointing = try DatabaseQueue(path: folder + "/race.sqlite", configuration: configuration)
        try checkpointing.writeWithoutTransaction { db in
            try db.execute(sql: """
                PRAGMA journal_mode = WAL;
                CREATE TABLE t (a INTEGER PRIMARY KEY, b BLOB);
                WITH s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 20) INSERT INTO t SELECT NULL, randomblob(600) FROM s;
                CREATE INDEX t_b ON t(b);
                """)
            _ = try db.checkpoint(.passive)
        }
        // The other connection changes every row and copies the whole log: the next checkpoint of the
        // first finds a header it has not read.
        let writing = try DatabaseQueue(path: folder + "/race.sqlite", configuration: configuration)
        try writing.writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE t SET b = randomblob(600)")
            let (logFrames, copiedFrames) = try db.checkpoint(.passive)
            try #require(logFrames > 0 && copiedFrames == logFrames)
        }
        let window = try CheckpointWindow(of: checkpointing) {
            try writing.write { db in try db.execute(sql: "UPDATE t SET b = randomblob(600) WHERE a < 5") }
        }
        try window.open { try checkpointing.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) } }
        #expect(window.runs == 1, "the other connection committed inside the checkpoint")
        // Had that commit started the log again, the first checkpoint would have left a wrong mark, and
        // this one would skip pages of the log: "row 1 missing from index t_b", and more.
        try writing.write { db in try db.execute(sql: "UPDATE t SET b = randomblob(600)") }
        try checkpointing.writeWithoutTransaction { db in _ = try db.checkpoint(.passive) }
        #expect(try checkpointing.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check") } == ["ok"])
    }

    @Test("a keystroke committed during the store's background checkpoint appends to the log")
    func storeWritesDuringItsCheckpoint() throws {
        let (store, checkpointer, _) = try storeOnFile()
        let first = try store.create(text: "first", now: 1, filter: nil).memo
        checkpointer.checkpointNow()
        // A long memo, copied whole by the writer: the background connection has not read that log.
        let long = try store.create(text: String(repeating: "회의 meeting notes\n", count: 3_000), now: 2, filter: nil).memo
        _ = try store.writer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        let pagesBefore = checkpointer.pagesInLog
        var pagesAfter: Int32 = 0
        var keystroke: StoredMemo?
        let window = try CheckpointWindow(of: try checkpointer.connection()) {
            keystroke = try store.update(id: first.id, text: "first!", baseVersion: nil, now: 3, filter: nil).memo
            pagesAfter = checkpointer.pagesInLog
        }
        try window.open { checkpointer.checkpointNow() }
        #expect(window.runs == 1, "the background checkpoint ran in its turn")
        // Started again, the log would hold the keystroke's few pages alone, fewer than the long memo's.
        #expect(pagesAfter > pagesBefore, "the keystroke appended to the log (\(pagesBefore) pages, then \(pagesAfter))")
        #expect(try store.memo(id: first.id)?.text == keystroke?.text)
        #expect(try store.memo(id: long.id)?.text == long.text)
        #expect(try store.integrityCheck() == "ok")
    }
}

// MARK: - Other processes

extension CheckpointTurnsTests {
    /// A store whose log holds a long memo copied whole: its next commit would start the log again.
    private func storeWithLogCopiedWhole() throws -> (MemoStore, LogCheckpointer, path: String, memo: StoredMemo) {
        let (store, checkpointer, path) = try storeOnFile()
        let memo = try store.create(text: String(repeating: "회의 meeting notes\n", count: 3_000), now: 1, filter: nil).memo
        _ = try store.writer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        return (store, checkpointer, path, memo)
    }

    @Test("while another process checkpoints the store, a commit appends to the log; after, it starts it again")
    func restartWaitsForAnotherProcess() throws {
        let (store, checkpointer, path, memo) = try storeWithLogCopiedWhole()
        let otherProcess = try ByteLocks(ofSharedMemoryOf: path)
        try otherProcess.lock(byte: ByteLocks.checkpoint, shared: true)
        let pagesBefore = checkpointer.pagesInLog
        _ = try store.update(id: memo.id, text: memo.text + "!", baseVersion: nil, now: 2, filter: nil)
        #expect(checkpointer.pagesInLog > pagesBefore, "appended (\(pagesBefore) pages, then \(checkpointer.pagesInLog))")

        try otherProcess.unlock(byte: ByteLocks.checkpoint)
        _ = try store.writer.writeWithoutTransaction { db in try db.checkpoint(.passive) }
        _ = try store.update(id: memo.id, text: memo.text + "!!", baseVersion: nil, now: 3, filter: nil)
        #expect(checkpointer.pagesInLog < pagesBefore, "started again (\(checkpointer.pagesInLog) pages)")
        #expect(try store.integrityCheck() == "ok")
    }

    @Test("while another process starts the log again, a checkpoint waits for it")
    func checkpointWaitsForAnotherProcess() throws {
        let (store, checkpointer, path, memo) = try storeWithLogCopiedWhole()
        _ = try store.update(id: memo.id, text: memo.text + "!", baseVersion: nil, now: 2, filter: nil)
        let otherProcess = try ByteLocks(ofSharedMemoryOf: path)
        try otherProcess.lock(byte: ByteLocks.restart, shared: false)
        let finished = checkpointer.finishedCheckpoints
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            checkpointer.checkpointNow()
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 0.3) == .timedOut, "the checkpoint ran during the other process's restart")
        try otherProcess.unlock(byte: ByteLocks.restart)
        #expect(done.wait(timeout: .now() + 30) == .success)
        #expect(checkpointer.finishedCheckpoints == finished + 1)
        #expect(try store.integrityCheck() == "ok")
    }
}

/// Another process's side of the turns: locks on the two bytes of the store's shared-memory file that
/// `CheckpointTurns.c` uses, through an open file description of their own (`F_OFD_SETLK`), which
/// conflicts with the store's as another process's would.
final class ByteLocks {
    static let checkpoint: Int = 136
    static let restart: Int = 137
    /// Linux's `F_OFD_SETLK`, which Glibc declares only with `_GNU_SOURCE`.
    private static let setLock: Int32 = 37
    private let descriptor: Int32

    init(ofSharedMemoryOf path: String) throws {
        descriptor = open(path + "-shm", O_RDWR | O_CLOEXEC)
        try #require(descriptor >= 0)
    }

    // Closing it drops this process's POSIX locks on the file, SQLite's among them; no other process
    // uses these stores.
    deinit { close(descriptor) }

    func lock(byte: Int, shared: Bool) throws {
        try set(byte: byte, type: shared ? F_RDLCK : F_WRLCK)
    }

    func unlock(byte: Int) throws {
        try set(byte: byte, type: F_UNLCK)
    }

    private func set(byte: Int, type: Int32) throws {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(byte)
        lock.l_len = 1
        try #require(fcntl(descriptor, Self.setLock, &lock) == 0, "errno \(errno)")
    }
}

/// Runs an action in the race's window of the next checkpoint on one connection: once, and for that
/// connection's file only, since other suites' stores checkpoint meanwhile.
final class CheckpointWindow: @unchecked Sendable {
    private let file: UnsafeMutableRawPointer
    private var action: (() throws -> Void)?
    private var failure: (any Error)?
    private(set) var runs = 0

    init(of connection: DatabaseQueue, _ action: @escaping () throws -> Void) throws {
        var file: UnsafeMutableRawPointer?
        connection.writeWithoutTransaction { db in
            _ = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_FILE_POINTER, &file)
        }
        self.file = try #require(file)
        self.action = action
    }

    /// Runs `body` with the window open, then rethrows what the action threw.
    func open<T>(_ body: () throws -> T) throws -> T {
        cloudnotes_set_checkpoint_window_hook({ context, file in
            Unmanaged<CheckpointWindow>.fromOpaque(context!).takeUnretainedValue().enter(file)
        }, Unmanaged.passUnretained(self).toOpaque())
        defer { cloudnotes_set_checkpoint_window_hook(nil, nil) }
        let result = try body()
        if let failure { throw failure }
        return result
    }

    private func enter(_ file: UnsafeMutableRawPointer?) {
        guard file == self.file, let action else { return }
        self.action = nil
        runs += 1
        do { try action() } catch { failure = error }
    }
}
