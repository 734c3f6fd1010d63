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
            try IndexingInterruption.run(interruption, on: db) { checkInterruption in
                let chosen = try Self.leadingLocalIDs(
                    Row.fetchCursor(db, sql: """
                        SELECT localID, length(text) FROM memo
                        WHERE indexed = 0 AND deleted = 0 AND importBatch IS NULL AND instr(text, X'00') = 0 LIMIT 500
                        """),
                    withinBytes: byteBudget)
                guard !chosen.isEmpty else { return 0 }
                try checkInterruption()
                try db.execute(
                    sql: "UPDATE memo SET indexed = 1 WHERE localID IN (SELECT value FROM json_each(?))",
                    arguments: [Self.jsonArray(chosen)])
                return chosen.count
            }
        }
    }
}

// MARK: - Interrupting a chunk

/// Stops the indexing chunk under way from another thread, so that a request arriving meanwhile takes
/// the write lock at once instead of waiting for the chunk (10–50 ms for 64 KB of text, merges included).
///
/// Only the chunk's own statements can be interrupted: the connection is handed out while they run,
/// and taken back before the commit. `sqlite3_interrupt` stops a statement under way; one called between
/// two statements, when none runs, affects nothing that starts later (SQLite's rule), so the chunk also
/// checks for an interruption before its next statement. An interruption thus never reaches the
/// request's own transaction. An interrupted chunk is rolled back whole; the memos it held stay
/// unindexed until the next one.
public final class IndexingInterruption: Sendable {
    private struct State {
        /// The connection, while a chunk's statements run on it.
        var connection: ConnectionHandle?
        var interrupted = false
    }

    private let state = Mutex(State())
    /// Called as each chunk's statements start (for tests).
    private let didArm: (@Sendable () -> Void)?

    public init() { didArm = nil }

    init(didArm: @escaping @Sendable () -> Void) { self.didArm = didArm }

    /// Whether a chunk's statements are running now (for tests).
    var isArmed: Bool { state.withLock { $0.connection != nil } }

    /// Stops the chunk under way, if any.
    public func interrupt() {
        state.withLock { state in
            guard let handle = state.connection else { return }
            state.interrupted = true
            sqlite3_interrupt(handle.connection)
        }
    }

    /// Runs `body` (a chunk's statements on `db`) where `interruption`, if any, can stop it. `body` calls
    /// the function it is given before each statement after the first.
    static func run<T>(_ interruption: IndexingInterruption?, on db: Database, _ body: (_ check: () throws -> Void) throws -> T) throws -> T {
        guard let interruption, let connection = db.sqliteConnection else { return try body {} }
        interruption.state.withLock { $0 = State(connection: ConnectionHandle(connection: connection)) }
        defer { interruption.state.withLock { $0 = State() } }
        interruption.didArm?()
        do {
            return try body {
                if interruption.state.withLock({ $0.interrupted }) { throw StoreError.cancelled }
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            // Not a failure of the store: `write` must keep the list orders in memory.
            throw StoreError.cancelled
        }
    }

    /// A connection handed to another thread for `sqlite3_interrupt`, which SQLite allows from any thread.
    private struct ConnectionHandle: @unchecked Sendable {
        let connection: OpaquePointer
    }
}
