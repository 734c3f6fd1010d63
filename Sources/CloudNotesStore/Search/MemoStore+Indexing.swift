import GRDB
import GRDBSQLite
import Synchronization

// MARK: - Background indexing

extension MemoStore {
    /// Adds to the full-text index some of the memos it does not hold yet (imports, long texts), about
    /// `byteBudget` bytes of text in one short transaction. Returns how many it indexed; 0 when none is left.
    ///
    /// Searches are right whether or not this has run: they read unindexed memos' text directly. A text
    /// that holds NUL stays out for good: the index would end it at the NUL. (Looking for the NUL reads
    /// each candidate's text, those kept out included, at every call: one pass over them a second when
    /// idle, nothing for a store without NUL.)
    ///
    /// `interruption` may stop the chunk from another thread while its statements run: it then throws
    /// `StoreError.cancelled`, having changed nothing.
    public func indexPendingMemos(byteBudget: Int = 64 * 1024, interruption: IndexingInterruption? = nil) throws -> Int {
        try write { db in
            try IndexingInterruption.run(interruption, on: db) {
                let chosen = try Self.leadingLocalIDs(
                    Row.fetchCursor(db, sql: """
                        SELECT localID, length(text) FROM memo
                        WHERE indexed = 0 AND deleted = 0 AND importBatch IS NULL AND instr(text, X'00') = 0 LIMIT ?
                        """, arguments: [max(500, byteBudget / 256)]),  // as many memos as short ones fill the budget
                    withinBytes: byteBudget)
                guard !chosen.isEmpty else { return 0 }
                // A few memos a statement: SQLite keeps a statement journal in memory (`temp_store`) of
                // every page one statement changes, which for a whole chunk grew with the chunk.
                let mark = try db.cachedStatement(sql: "UPDATE memo SET indexed = 1 WHERE localID IN (SELECT value FROM json_each(?))")
                for start in stride(from: 0, to: chosen.count, by: Self.memosPerIndexingStatement) {
                    let part = chosen[start..<min(start + Self.memosPerIndexingStatement, chosen.count)]
                    try mark.execute(arguments: [Self.jsonArray(Array(part))])
                }
                return chosen.count
            }
        }
    }
}

extension MemoStore {
    /// How many memos one statement of an indexing chunk marks indexed.
    static let memosPerIndexingStatement = 25
}

// MARK: - Chunks bounded by bytes

extension MemoStore {
    /// The local ids of `rows` (each a local id and its text's length), in order, up to `byteBudget` bytes
    /// of text, and at least the first: how an indexing chunk takes its memos.
    ///
    /// The texts are BLOBs, so `length(text)` is read from each record's header: the length loads no text.
    static func leadingLocalIDs(_ rows: RowCursor, withinBytes byteBudget: Int) throws -> [Int64] {
        var chosen: [Int64] = []
        var bytes = 0
        while let row = try rows.next() {
            let length: Int = row[1]
            if !chosen.isEmpty, bytes + length > byteBudget { break }
            chosen.append(row[0])
            bytes += length
        }
        return chosen
    }
}

// MARK: - Interrupting a chunk

/// Stops the indexing chunk under way from another thread, so that a request arriving meanwhile takes
/// the write lock at once instead of waiting for the chunk to end (its merges included).
///
/// An interruption asked for (`interrupt`) stays asked for until the indexer `reset`s it, as it decides
/// to index: a chunk that starts after it, or is running, ends at its next check. SQLite's progress
/// handler checks every few dozen steps of the chunk's statements, which then fail with
/// `SQLITE_INTERRUPT`. The handler is on the connection only while the chunk's statements run; the
/// commit and every other transaction run without it. (Not `sqlite3_interrupt`: its flag stays set on
/// the connection while FTS5 holds a blob open after a write, and then fails the chunk's commit as a
/// write error.) An interrupted chunk is rolled back whole; the memos it held stay unindexed until the
/// next one.
public final class IndexingInterruption: Sendable {
    private let requested = Atomic(false)
    /// Called as each chunk starts (for tests).
    private let didStartChunk: (@Sendable () -> Void)?

    public init() { didStartChunk = nil }

    init(didStartChunk: @escaping @Sendable () -> Void) { self.didStartChunk = didStartChunk }

    /// Stops the chunk under way, or the next one if none is.
    public func interrupt() {
        requested.store(true, ordering: .sequentiallyConsistent)
    }

    /// Forgets the interruptions asked for until now: the indexer calls it before it looks whether the
    /// client is quiet, so that a message that arrives after that look stops the chunk it decides on.
    public func reset() {
        requested.store(false, ordering: .sequentiallyConsistent)
    }

    private var isRequested: Bool { requested.load(ordering: .sequentiallyConsistent) }

    /// How many virtual machine steps SQLite takes between two calls of the progress handler.
    static let stepsBetweenChecks: Int32 = 64

    /// Runs `body` (a chunk's statements on `db`) where `interruption`, if any, can stop it.
    static func run<T>(_ interruption: IndexingInterruption?, on db: Database, _ body: () throws -> T) throws -> T {
        guard let interruption, let connection = db.sqliteConnection else { return try body() }
        interruption.didStartChunk?()
        // Unretained: the handler is removed below, while `interruption` is still held here.
        sqlite3_progress_handler(connection, stepsBetweenChecks, { context in
            Unmanaged<IndexingInterruption>.fromOpaque(context!).takeUnretainedValue().isRequested ? 1 : 0
        }, Unmanaged.passUnretained(interruption).toOpaque())
        defer { sqlite3_progress_handler(connection, 0, nil, nil) }
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            // Not a failure of the store: `write` must keep the list orders in memory.
            throw StoreError.cancelled
        }
    }
}
