import Foundation
import GRDB
import Synchronization

// MARK: - An import under way

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
    /// The import's name in `importChunk`: its process (to tell an abandoned import) and a UUID.
    let batch = "\(getpid()) \(UUID().uuidString)"
    /// The connection that writes the chunks, its triggers off (see `MemoStore.openImportConnection`);
    /// nil for a store in memory or a read-only one.
    let connection: DatabaseQueue?
    /// The sequence number of the next memo added, one below the last one's; nil before the first.
    private let nextNumber = Mutex<Int64?>(nil)

    init(store: MemoStore) throws {
        self.store = store
        connection = try store.openImportConnection()
    }

    /// How many memos one statement of `finish` (or `discard`) handles, at most.
    static let rowsPerStatement = 1000

    /// Stores `memos` (hidden until `finish`), in the order given.
    func add(_ memos: [MemoStore.NewMemo]) throws {
        guard !memos.isEmpty else { return }
        let below = try writeChunk { db in
            let top = try nextNumber.withLock { $0 } ?? MemoStore.topOfNewImportBlock(db)
            let (first, last) = try MemoStore.insert(memos, numberedDownFrom: top, db)
            try db.execute(sql: "INSERT INTO importChunk (batch, firstLocalID, lastLocalID) VALUES (?, ?, ?)",
                           arguments: [batch, first, last])
            return top - Int64(memos.count)
        }
        // Only once committed: a chunk rolled back took no numbers.
        nextNumber.withLock { $0 = below }
    }

    /// Runs `body` in a write transaction whose statements leave out every trigger: on the import's
    /// connection, or for a store in memory or a read-only one, on the writer.
    ///
    /// Hidden memos that are not indexed: `memo_fts_insert` (WHEN new.indexed) has nothing to do. Yet a
    /// trigger SQLite must consider gave each INSERT a statement journal and a call of the trigger's
    /// program for each memo, and sent a multi-row INSERT through a temporary table: 641 -> 410 million
    /// instructions for the benchmark's first 10,000 memos, one a statement (callgrind, `add` alone).
    private func writeChunk<T>(_ body: (Database) throws -> T) throws -> T {
        guard let connection else { return try store.write { db in try db.withoutTriggers { try body(db) } } }
        // A commit past the log's inline limit checkpointed inside the write's turn, and a keystroke's
        // write waited for it, again and again during an import. The import's
        // own connection copies the log between its chunks instead, when nobody waits for it, and only
        // past the import's limit.
        let result = try store.write(through: connection, leavingCheckpointsToBackground: true, body)
        store.checkpointer?.checkpointIfPastImportLimit(on: connection)
        return result
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
        // The chunks are written: their connection's pages go before the writer fills its own.
        try? connection?.close()
        // Its commit logs a page for every few memos: copying them to the file
        // is for the background, while the import's caller gets its answer.
        try store.write(leavingCheckpointsToBackground: true) { db in
            let ranges = try MemoStore.ranges(of: batch, db)
            guard let firstMemo = ranges.first?.lowerBound, let lastMemo = ranges.last?.upperBound else { return }
            let top = try MemoStore.seq(ofLocalID: firstMemo, db)
            let bottom = try MemoStore.seq(ofLocalID: lastMemo, db)
            let numberedAbove = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM memo WHERE seq > ?)", arguments: [top]) ?? false
            // A statement per `rowsPerStatement` memos: until a statement ends, SQLite keeps a copy of
            // every page it changed (its statement journal, in memory: see `prepareConnection`). One
            // statement for the whole import held a large import's texts when a shown record was
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
            try store.countVisibleChange(db)
            store.forgetCaughtUp()
        }
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

    /// Removes every memo added, and closes the import's connection.
    func abandon() {
        try? connection?.close()
        try? store.discard(batch: batch)
    }
}
