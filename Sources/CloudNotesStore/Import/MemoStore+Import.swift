import Foundation
import GRDB

// MARK: - Import

extension MemoStore {
    /// Imports the chunks `nextChunk` returns, until it returns an empty one: all of them or, if
    /// cancelled or failed (also in `nextChunk`), none. `didStore` gets the count stored after each chunk.
    ///
    /// Meanwhile no commit copies the write-ahead log back into the file, a keystroke's no more than the
    /// import's: the import does, between its chunks, once the log is past `LogCheckpointer.Limits.importPages`.
    public func importMemos(
        isCancelled: () -> Bool = { false }, nextChunk: () throws -> [NewMemo], didStore: (Int) -> Void = { _ in }
    ) throws -> Int {
        try leavingCheckpointsToTheImport {
            let session = try ImportSession(store: self)
            do {
                var stored = 0
                while true {
                    if isCancelled() { throw StoreError.cancelled }
                    let chunk = try nextChunk()
                    if chunk.isEmpty { break }
                    try session.add(chunk)
                    stored += chunk.count
                    didStore(stored)
                }
                if isCancelled() { throw StoreError.cancelled }
                try session.finish()
                return stored
            } catch {
                session.abandon()
                throw error
            }
        }
    }

    /// Runs `body`, an import, with every commit leaving its checkpoint to the background, and the
    /// import its own between its chunks (`ImportSession.add`).
    private func leavingCheckpointsToTheImport<T>(_ body: () throws -> T) rethrows -> T {
        guard let checkpointer else { return try body() }
        return try checkpointer.leavingCheckpointsToBackground(body)
    }

    /// Imports `memos` in chunks of `chunkSize`: all of them or none.
    public func importMemos(
        _ memos: [NewMemo], chunkSize: Int = 1000, isCancelled: () -> Bool = { false }, progress: (Int) -> Void = { _ in }
    ) throws -> Int {
        var remaining = memos[...]
        return try importMemos(
            isCancelled: isCancelled,
            nextChunk: {
                defer { remaining = remaining.dropFirst(chunkSize) }
                return Array(remaining.prefix(chunkSize))
            },
            didStore: progress)
    }

    // MARK: The import's connection

    /// Opens a connection of this store's file for an import's chunks (nil for a store in memory or a
    /// read-only one, whose imports write through the writer): prepared as the writer is, with SQLite's
    /// default 2 MB of pages, since an import's pages pass through once, and with its triggers off for
    /// good.
    ///
    /// On the writer, each chunk turned the triggers off and on again, and each turn made SQLite prepare
    /// every statement of the connection again: the chunk's 20-memo INSERT (about 640 times for 100,000
    /// memos), and the statements of the first keystroke after each chunk. And the writer, which serves
    /// the list and search, keeps its cache's size (its pages go at each chunk's commit, as at any other
    /// connection's).
    func openImportConnection() throws -> DatabaseQueue? {
        // A read-only store's writer refuses the import's first write with the usual message.
        guard let path, let checkpointer, !isReadOnly else { return nil }
        var configuration = Configuration()
        configuration.label = "cloudnotes.import"
        configuration.busyMode = .timeout(10)
        let durability = durability, connections = connections
        configuration.prepareDatabase { db in
            try Self.prepareConnection(db, durability: durability, checkpointer: checkpointer, connections: connections)
            try db.execute(sql: "PRAGMA cache_size = \(-Self.defaultPageCacheKiB)")
            db.turnTriggersOff()
        }
        do {
            return try DatabaseQueue(path: path, configuration: configuration)
        } catch let error as DatabaseError {
            throw StoreError.writeFailed(error)
        }
    }

    // MARK: Inserting

    /// Inserts `chunk`, hidden, numbered `firstNumber`, one less, and so on, and returns the first and
    /// last local ids it took (every id between is one of its memos).
    static func insert(_ chunk: [NewMemo], numberedDownFrom firstNumber: Int64, _ db: Database) throws -> (first: Int64, last: Int64) {
        // The chunk's ids share their first byte, drawn for the chunk, so that the chunk's entries in the
        // `id` index land in one 256th of it: fully random ids put the chunk's thousand entries on most
        // of the index's pages, and each chunk's commit logged them all again, much of what an import
        // wrote. The other 114 random bits keep ids unique; the
        // shell's eight-digit short ids are a little likelier to clash (about 4 clashing pairs among
        // 100,000 imported memos, against 1 with fully random ids), and a clash asks for more digits.
        let ids = RandomMemoIDs.make(count: chunk.count, leadingByte: .random(in: .min ... .max))
        var first: Int64?
        var start = 0
        while start < chunk.count {
            // The last few memos one at a time: one more statement to prepare, not one for each length.
            let count = chunk.count - start >= memosPerInsert ? memosPerInsert : 1
            let rows = start ..< start + count
            let insert = try db.cachedStatement(sql: count == memosPerInsert ? fullInsert : singleInsert)
            try insert.executeOnce(bindingInPlace: rows.map { chunk[$0].text }, at: { insertParameter(2, ofMemo: $0) }) { parameters in
                for (memo, index) in rows.enumerated() {
                    let entry = chunk[index]
                    parameters.bind(ids[index], at: insertParameter(1, ofMemo: memo))
                    parameters.bind(entry.title, at: insertParameter(3, ofMemo: memo))
                    parameters.bind(entry.preview, at: insertParameter(4, ofMemo: memo))
                    parameters.bind(entry.modifiedAt, at: insertParameter(5, ofMemo: memo))
                    parameters.bind(entry.modifiedAt, at: insertParameter(6, ofMemo: memo))
                    parameters.bind(firstNumber - Int64(index), at: insertParameter(7, ofMemo: memo))
                }
            }
            first = first ?? db.lastInsertedRowID - Int64(count - 1)
            start += count
        }
        // One writer holds the transaction, so the rows took consecutive ids: `finish` and `discard`
        // find them by range.
        let last = db.lastInsertedRowID
        guard let first, last - first + 1 == Int64(chunk.count) else {
            throw StoreError.writeFailed("an import's chunk of \(chunk.count) memos took local ids that are not consecutive")
        }
        return (first, last)
    }

    // MARK: Memos per statement

    /// How many memos one INSERT of an import adds.
    ///
    /// Instructions of `add` for the benchmark's first 10,000 memos (callgrind, triggers off): 410
    /// million one memo a statement, about 335 million from 10 to 30, 442 million at 100. Each statement
    /// reads and writes AUTOINCREMENT's counter once; a longer one costs more to prepare, which SQLite
    /// did again at every chunk when these were measured (see `MemoStore.openImportConnection`).
    static let memosPerInsert = 20

    /// The INSERT of `memosPerInsert` memos, the import's usual statement.
    private static let fullInsert = insertSQL(memos: memosPerInsert)
    /// The INSERT of one memo, for a chunk's last memos.
    private static let singleInsert = insertSQL(memos: 1)

    /// An INSERT of `count` hidden memos, each with seven parameters (see `insertParameter`).
    ///
    /// OR FAIL: a constraint that fails (a clash in the unique `id` or `seq`) ends the statement and
    /// leaves its earlier memos in place, where OR ABORT would take them back out. Whoever runs it
    /// rolls back the whole transaction on that error (`MemoStore.write(through:)`), so nothing is left either
    /// way, and SQLite keeps no statement journal: a copy of every page the statement changes, which
    /// it needs only to take a statement back. That holds while no condition of an index of `memo`
    /// calls a function, which might fail too (see migration v7).
    static func insertSQL(memos count: Int) -> String {
        "INSERT OR FAIL INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, deleted, importBatch, author) VALUES "
            + repeatElement("(?, ?, ?, ?, ?, ?, 1, ?, 0, X'', '\(importAuthor)')", count: count).joined(separator: ", ")
    }

    /// The author of an imported text (see `Author`).
    static let importAuthor = Author(kind: .import, detail: "").stored

    /// The index of the `column`th parameter (1: id, 2: text, 3: title, 4: preview, 5: createdAt,
    /// 6: modifiedAt, 7: seq) of the `memo`th memo (from 0) of an `insertSQL` statement.
    static func insertParameter(_ column: Int32, ofMemo memo: Int) -> Int32 {
        Int32(memo) * 7 + column
    }

    /// How many sequence numbers an import reserves above every number, and the lowest top it numbers
    /// down from (2^32).
    ///
    /// An import of more memos than that would meet numbers in use, and fail on the index that keeps
    /// numbers unique: a file of 2^32 memos holds at least 160 GB. The numbers of a block (and those
    /// `finish` gives when it numbers again, just above) take six bytes in a record up to 2^47, so that
    /// numbering again keeps each record's size, and SQLite rewrites only the pages that change.
    static let importBlockSize: Int64 = 1 << 32

    /// The number an import's first memo takes: the top of a new block above every number.
    static func topOfNewImportBlock(_ db: Database) throws -> Int64 {
        max(try nextSeq(db), importBlockSize) + importBlockSize - 1
    }

    /// The sequence number of the memo with local id `localID`.
    static func seq(ofLocalID localID: Int64, _ db: Database) throws -> Int64 {
        guard let seq = try Int64.fetchOne(db.cachedStatement(sql: "SELECT seq FROM memo WHERE localID = ?"), arguments: [localID]) else {
            throw StoreError.writeFailed("an import's memo \(localID) is missing")
        }
        return seq
    }

    /// The ranges of local ids that `batch`'s chunks took, in order.
    static func ranges(of batch: String, _ db: Database) throws -> [ClosedRange<Int64>] {
        try Row.fetchAll(db, sql: "SELECT firstLocalID, lastLocalID FROM importChunk WHERE batch = ? ORDER BY firstLocalID",
                         arguments: [batch])
            .map { ($0[0] as Int64)...($0[1] as Int64) }
    }

    /// The first of `batch`'s ranges, if any is left.
    static func firstRange(of batch: String, _ db: Database) throws -> ClosedRange<Int64>? {
        try Row.fetchOne(db, sql: """
            SELECT firstLocalID, lastLocalID FROM importChunk WHERE batch = ? ORDER BY firstLocalID LIMIT 1
            """, arguments: [batch])
            .map { ($0[0] as Int64)...($0[1] as Int64) }
    }

    /// Removes the memos of an unfinished import, up to `ImportSession.rowsPerStatement` per transaction
    /// (an in-memory statement journal holds every page its statement changes).
    func discard(batch: String) throws {
        var more = true
        while more {
            more = try write { db in
                guard let range = try Self.firstRange(of: batch, db) else { return false }
                let through = min(range.upperBound, range.lowerBound + Int64(ImportSession.rowsPerStatement) - 1)
                // Only hidden memos, should a range ever outlive its import.
                try db.execute(sql: "DELETE FROM memo WHERE localID BETWEEN ? AND ? AND importBatch IS NOT NULL",
                               arguments: [range.lowerBound, through])
                if through == range.upperBound {
                    try db.execute(sql: "DELETE FROM importChunk WHERE batch = ? AND firstLocalID = ?",
                                   arguments: [batch, range.lowerBound])
                } else {
                    try db.execute(sql: "UPDATE importChunk SET firstLocalID = ? WHERE batch = ? AND firstLocalID = ?",
                                   arguments: [through + 1, batch, range.lowerBound])
                }
                return try Self.firstRange(of: batch, db) != nil
            }
        }
    }

    /// Removes the memos an older version's import marked with its name (before migration
    /// "v5-import-ranges"), a statement at a time.
    private func discardMarked(byName batch: String) throws {
        var removed = 0
        repeat {
            removed = try write { db in
                try db.execute(
                    sql: """
                        DELETE FROM memo WHERE localID IN (
                            SELECT localID FROM memo WHERE \(Self.namedImportMark) AND importBatch = ? LIMIT \(ImportSession.rowsPerStatement))
                        """,
                    arguments: [batch])
                return db.changesCount
            }
        } while removed > 0
    }

    /// Removes what imports left behind when their process died mid-way.
    func discardAbandonedImports() throws {
        // The writer connection, as in `openPool`: opening a reader connection for this costs more than the reads.
        let (batches, namedBatches) = try writer.writeWithoutTransaction { db in
            (try String.fetchAll(db, sql: "SELECT DISTINCT batch FROM importChunk"),
             try String.fetchAll(db, sql: "SELECT DISTINCT importBatch FROM memo WHERE \(Self.namedImportMark)"))
        }
        for batch in namedBatches where Self.processID(ofBatch: batch) != nil && !Self.isRunning(batch: batch) {
            try discardMarked(byName: batch)
        }
        for batch in batches where !Self.isRunning(batch: batch) {
            try discard(batch: batch)
        }
    }

    /// The condition of a memo marked with a name (by an older version's import, or "import" by
    /// `StoredMemo`): the condition of index `memo_import_names`, which a query must repeat word for word
    /// for SQLite to use it, and not read every memo.
    static let namedImportMark = "importBatch < X''"

    /// The process that named `batch` ("pid uuid"), or nil where the mark is no import's name: a memo
    /// written through `StoredMemo` while its import runs is marked "import", and found by its range.
    private static func processID(ofBatch batch: String) -> pid_t? {
        guard let pid = batch.split(separator: " ").first.flatMap({ Int32($0) }), pid > 0 else { return nil }
        return pid
    }

    /// Whether the process that named `batch` ("pid uuid") runs, and is another one.
    private static func isRunning(batch: String) -> Bool {
        guard let pid = processID(ofBatch: batch) else { return false }
        return pid != getpid() && (kill(pid, 0) == 0 || errno == EPERM)
    }
}
