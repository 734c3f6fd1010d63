import GRDB
import Synchronization

// MARK: - Changes made by other processes

/// Where the split view stands against the store's file: the last `data_version` it looked at (which
/// moves with every commit of another connection), and the count of visible changes then.
struct CaughtUp: Sendable {
    var dataVersion: Int64?
    var visibleChanges: Int64?
}

extension MemoStore {
    /// Whether other connections (other processes: a second editor, the shell, a sync) committed
    /// changes that a front end can see and the split view has not caught up with. Only looks; see
    /// `takeChangesElsewhere(filter:)`.
    public func hasChangesElsewhere() throws -> Bool {
        try writer.writeWithoutTransaction { db in try lookElsewhere(db)?.changed ?? false }
    }

    /// Notes that the split view caught up with other connections' changes, as `takeChangesElsewhere(filter:)`
    /// does, for a caller that shows the list anew anyway; returns whether there were any.
    @discardableResult
    public func takeChangesElsewhere() throws -> Bool {
        try takeChangesElsewhere(filter: nil) != nil
    }

    /// Where the file stands now, and whether that holds visible changes the split view has not caught
    /// up with; nil when no other connection committed since (or the store is read-only, and read as it
    /// was opened: see `openReadOnly`).
    private func lookElsewhere(_ db: Database) throws -> (now: CaughtUp, changed: Bool)? {
        if isReadOnly { return nil }
        let known = caughtUp.withLock { $0 }
        let version = try dataVersion(db)
        guard version != known.dataVersion else { return nil }
        let now = CaughtUp(dataVersion: version, visibleChanges: try visibleChangeCount(db))
        return (now, now.visibleChanges != known.visibleChanges)
    }

    /// Counts a visible change this connection makes, inside its transaction (of `write`, which has
    /// brought the list orders up to date with the file).
    ///
    /// The split view and the list orders in memory both follow this change as it is made, so neither
    /// takes it for another process's.
    func countVisibleChange(_ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE visibleChanges SET count = count + 1").execute()
        caughtUp.withLock { $0.visibleChanges = $0.visibleChanges.map { $0 + 1 } }
        cache.state.withLock { $0.visibleChanges = $0.visibleChanges.map { $0 + 1 } }
    }

    /// Forgets what was caught up with, so that the next look reports changes: for when a catch-up,
    /// or a change that took them, failed before the client heard of them.
    public func forgetCaughtUp() {
        caughtUp.withLock { $0 = CaughtUp() }
        cache.state.withLock { $0.moveLog = nil }
    }

    /// Starts from the store as it is when opened.
    func noteCaughtUp() throws {
        try writer.writeWithoutTransaction { db in
            if let look = try lookElsewhere(db) { caughtUp.withLock { $0 = look.now } }
        }
    }

    /// Moves with every commit of another connection, visible or not.
    func dataVersion(_ db: Database) throws -> Int64? {
        try db.cachedStatement(sql: "PRAGMA data_version").withFirstRow { $0.int64(0) }
    }

    /// Moves with every visible change, of any connection (see migration `v2-visible-changes`).
    func visibleChangeCount(_ db: Database) throws -> Int64? {
        try db.cachedStatement(sql: "SELECT count FROM visibleChanges").withFirstRow { $0.optionalInt64(0) } ?? nil
    }
}
