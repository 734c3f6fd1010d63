import Foundation
import GRDB
import Synchronization

// MARK: - Import

/// One import under way (see `MemoStore.importMemos`): its memos go in by chunks, each its own short transaction, so that
/// interactive writes are never queued behind a whole import, and stay hidden (`importBatch` set)
/// until `finish` shows them all in one last transaction. Each chunk's memos take consecutive local
/// ids, recorded as a range of the import in table `importChunk`.
///
/// Its memos are numbered downward from the top of a block reserved above every sequence number (see
/// `MemoStore.importBlockSize`): the first memo of the file gets the highest, so that among memos with
/// the same timestamp the list shows them in the file's order; and when nothing is numbered above the
/// block by the time the import ends, its memos are shown with the numbers they have.
///
/// All or nothing: an import that is abandoned (cancelled, failed) removes its chunks; one whose
/// process died is removed when a store is next opened.
final class ImportSession: Sendable {
    let store: MemoStore
    let batch = "\(getpid()) \(UUID().uuidString)"
    /// The sequence number of the next memo added, one below the last one's; nil before the first.
    private let nextNumber = Mutex<Int64?>(nil)

    init(store: MemoStore) { self.store = store }

    /// How many memos one statement of `finish` (or `discard`) handles, at most.
    static let rowsPerStatement = 1000

    /// Stores `memos` (hidden until `finish`), in the order given.
    func add(_ memos: [MemoStore.NewMemo]) throws {
        guard !memos.isEmpty else { return }
        let below = try store.write { db in
            // Hidden memos that are not indexed: `memo_fts_insert` (WHEN new.indexed) has nothing to do. Yet
            // a trigger SQLite must consider gave each INSERT a statement journal and a call of the
            // trigger's program for each memo, and sent a multi-row INSERT through a temporary table:
            // 641 -> 410 million instructions for the benchmark's first 10,000 memos, one a statement
            // (callgrind, `add` alone).
            try db.withoutTriggers {
                let top = try nextNumber.withLock { $0 } ?? MemoStore.topOfNewImportBlock(db)
                let (first, last) = try MemoStore.insert(memos, numberedDownFrom: top, db)
                try db.execute(sql: "INSERT INTO importChunk (batch, firstLocalID, lastLocalID) VALUES (?, ?, ?)",
                               arguments: [batch, first, last])
                return top - Int64(memos.count)
            }
        }
        // Only once committed: a chunk rolled back took no numbers.
        nextNumber.withLock { $0 = below }
    }

    /// Shows every memo added, above every change made meanwhile, so that whoever reads changes by
    /// sequence number sees them as new; in the order they were added among memos of one timestamp.
    ///
    /// A change made while the import ran (here or in another process: an edit, a sync, another
    /// import) is numbered above the block, and then the memos are numbered again above it, in the
    /// same order. Otherwise their numbers are already the highest, and showing them changes only their
    /// mark: renumbering rewrites every index entry by number, a third of the time that `finish` took
    /// for 100,000 memos.
    func finish() throws {
        // Its commit logs a page for every few memos (about 100 MB for 100,000): copying them to the file
        // is for the background, while the import's caller gets its answer.
        try store.leavingCheckpointsToBackground { try store.write { db in
            let ranges = try MemoStore.ranges(of: batch, db)
            guard let firstMemo = ranges.first?.lowerBound, let lastMemo = ranges.last?.upperBound else { return }
            let top = try MemoStore.seq(ofLocalID: firstMemo, db)
            let bottom = try MemoStore.seq(ofLocalID: lastMemo, db)
            let numberedAbove = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM memo WHERE seq > ?)", arguments: [top]) ?? false
            // A statement per `rowsPerStatement` memos: until a statement ends, SQLite keeps a copy of
            // every page it changed (its statement journal, in memory: see `prepareConnection`). One
            // statement for the whole import held 240 MB for 100,000 memos when a shown record was
            // rewritten whole. A record that keeps its size (see `importBlockSize`) changes only the
            // pages that hold its header, number and mark, never its text's: so a statement's share is
            // counted in memos, not in bytes of text.
            let show: Statement
            let arguments: (_ first: Int64, _ last: Int64) -> StatementArguments
            if numberedAbove {
                // Numbered again from just above every number, `bottom` becoming the lowest.
                let shift = try MemoStore.nextSeq(db) - bottom
                show = try db.cachedStatement(sql: Self.showNumberedAgain)
                arguments = { [shift, $0, $1] }
            } else {
                show = try db.cachedStatement(sql: Self.show)
                arguments = { [$0, $1] }
            }
            for range in ranges {
                for first in stride(from: range.lowerBound, through: range.upperBound, by: Self.rowsPerStatement) {
                    try show.execute(arguments: arguments(first, min(first + Int64(Self.rowsPerStatement) - 1, range.upperBound)))
                }
            }
            try db.execute(sql: "DELETE FROM importChunk WHERE batch = ?", arguments: [batch])
            store.cache.invalidate()  // rebuilt at the next read, in one pass
            // Other processes see the import; here, the split view catches up with it whole at its next
            // step (`didImport`, or an intent that comes first), never one row of it in another's indexes.
            _ = try store.countVisibleChange(db)
            store.forgetCaughtUp()
        } }
    }

    /// Shows the hidden memos among local ids `?` to `?`.
    static let show = "UPDATE memo SET importBatch = NULL WHERE localID BETWEEN ? AND ? AND importBatch IS NOT NULL"
    /// Shows the hidden memos among local ids `?` to `?` (the second and third parameters), their numbers
    /// raised by the first.
    ///
    /// OR FAIL, as `MemoStore.insertSQL`: a number is unique, and ABORT would have SQLite keep a copy of
    /// every page the statement changes; a failure fails `finish`'s whole transaction anyway.
    static let showNumberedAgain = """
        UPDATE OR FAIL memo SET importBatch = NULL, seq = seq + ? WHERE localID BETWEEN ? AND ? AND importBatch IS NOT NULL
        """

    /// Removes every memo added.
    func abandon() {
        try? store.discard(batch: batch)
    }
}

extension MemoStore {
    /// Imports the chunks `nextChunk` returns, until it returns an empty one: all of them or, if
    /// cancelled or failed (also in `nextChunk`), none. `didStore` gets the count stored after each chunk.
    public func importMemos(
        isCancelled: () -> Bool = { false }, nextChunk: () throws -> [NewMemo], didStore: (Int) -> Void = { _ in }
    ) throws -> Int {
        let session = ImportSession(store: self)
        // A smaller cache while adding: the import's pages pass through once, and the RSS target holds.
        try setPageCache(kib: Self.defaultPageCacheKiB)
        defer { try? setPageCache(kib: Self.pageCacheKiB) }
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
            // The usual cache again for `finish`, which adds every memo to the list's index in an order
            // of its own: its 800 pages at 100,000 memos did not stay in 2 MB beside the memos' pages,
            // and most of its inserts read a page back from the log, then wrote it there again.
            try setPageCache(kib: Self.pageCacheKiB)
            try session.finish()
            return stored
        } catch {
            session.abandon()
            throw error
        }
    }

    /// Runs `body`, whose commits leave checkpoints to the background, however long the log grows (see
    /// `LogCheckpointer.leavingCheckpointsToBackground`).
    func leavingCheckpointsToBackground<T>(_ body: () throws -> T) rethrows -> T {
        guard let checkpointer else { return try body() }
        return try checkpointer.leavingCheckpointsToBackground(body)
    }

    /// Sets the page cache of the connection that writes (and serves the list and search).
    private func setPageCache(kib: Int) throws {
        try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA cache_size = \(-kib)") }
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

    /// Inserts `chunk`, hidden, numbered `firstNumber`, one less, and so on, and returns the first and
    /// last local ids it took (every id between is one of its memos).
    static func insert(_ chunk: [NewMemo], numberedDownFrom firstNumber: Int64, _ db: Database) throws -> (first: Int64, last: Int64) {
        // The chunk's ids share their first byte, drawn for the chunk, so that the chunk's entries in the
        // `id` index land in one 256th of it: fully random ids put the chunk's thousand entries on most
        // of the index's pages, and each chunk's commit logged them all again (356 of the 822 MB that
        // 100,000 memos wrote in chunks; 2 of 5.5 s). The other 114 random bits keep ids unique; the
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
    /// does again at every chunk (see `Database.withoutTriggers`).
    static let memosPerInsert = 20

    /// The INSERT of `memosPerInsert` memos, the import's usual statement.
    private static let fullInsert = insertSQL(memos: memosPerInsert)
    /// The INSERT of one memo, for a chunk's last memos.
    private static let singleInsert = insertSQL(memos: 1)

    /// An INSERT of `count` hidden memos, each with seven parameters (see `insertParameter`).
    ///
    /// OR FAIL: a constraint that fails (a clash in the unique `id` or `seq`) ends the statement and
    /// leaves its earlier memos in place, where OR ABORT would take them back out. Whoever runs it
    /// rolls back the whole transaction on that error (`MemoStore.write`), so nothing is left either
    /// way, and SQLite keeps no statement journal: a copy of every page the statement changes, which
    /// it needs only to take a statement back. That holds while no condition of an index of `memo`
    /// calls a function, which might fail too (see migration v7).
    static func insertSQL(memos count: Int) -> String {
        "INSERT OR FAIL INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, deleted, importBatch) VALUES "
            + repeatElement("(?, ?, ?, ?, ?, ?, 1, ?, 0, X'')", count: count).joined(separator: ", ")
    }

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
