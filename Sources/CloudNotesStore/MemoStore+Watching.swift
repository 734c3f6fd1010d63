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
    /// `takeChangesElsewhere()`.
    ///
    /// SQLite's `data_version` moves with other connections' commits only, so this process's own
    /// writes, which the mediator announces as it makes them, never count; among those commits, only
    /// the ones that counted a visible change do.
    public func hasChangesElsewhere() throws -> Bool {
        if isReadOnly { return false }  // read as it was opened (see `openReadOnly`)
        return try writer.writeWithoutTransaction { db in
            let known = caughtUp.withLock { $0 }
            guard try dataVersion(db) != known.dataVersion else { return false }
            return try visibleChanges(db) != known.visibleChanges
        }
    }

    /// Like `hasChangesElsewhere()`, and notes that the caller is now catching up with them.
    public func takeChangesElsewhere() throws -> Bool {
        try writer.writeWithoutTransaction { db in try takeChangesElsewhere(db) }
    }

    func takeChangesElsewhere(_ db: Database) throws -> Bool {
        if isReadOnly { return false }
        let known = caughtUp.withLock { $0 }
        let version = try dataVersion(db)
        guard version != known.dataVersion else { return false }
        let count = try visibleChanges(db)
        caughtUp.withLock { $0 = CaughtUp(dataVersion: version, visibleChanges: count) }
        return count != known.visibleChanges
    }

    /// Counts a visible change this connection makes, inside its transaction, and returns whether other
    /// processes' visible changes came first (the split view must then catch up with them too).
    func countVisibleChange(_ db: Database) throws -> Bool {
        let elsewhere = try takeChangesElsewhere(db)
        try db.execute(sql: "UPDATE visibleChanges SET count = count + 1")
        caughtUp.withLock { $0.visibleChanges = $0.visibleChanges.map { $0 + 1 } }
        return elsewhere
    }

    /// Forgets what was caught up with, so that the next look reports changes: for when a catch-up,
    /// or a change that took them, failed before the client heard of them.
    public func forgetCaughtUp() {
        caughtUp.withLock { $0 = CaughtUp() }
    }

    /// Starts from the store as it is when opened.
    func noteCaughtUp() throws {
        try writer.writeWithoutTransaction { db in _ = try takeChangesElsewhere(db) }
    }

    private func dataVersion(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))
    }

    private func visibleChanges(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT count FROM visibleChanges"))
    }
}
