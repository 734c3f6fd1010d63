import GRDB
import Synchronization

// MARK: - Changes made by other processes

extension MemoStore {
    /// Whether other connections (other processes: a second editor, the shell, a sync) committed
    /// changes that the split view has not caught up with. Only looks; see `takeChangesElsewhere()`.
    ///
    /// SQLite's `data_version` counts the commits of other connections only, so this process's own
    /// writes, which the mediator announces as it makes them, never count.
    public func hasChangesElsewhere() throws -> Bool {
        if isReadOnly { return false }  // read as it was opened (see `openReadOnly`)
        return try writer.writeWithoutTransaction { db in
            let version = try dataVersion(db)
            return caughtUpDataVersion.withLock { $0 != version }
        }
    }

    /// Like `hasChangesElsewhere()`, and notes that the caller is now catching up with them.
    public func takeChangesElsewhere() throws -> Bool {
        try writer.writeWithoutTransaction { db in try takeChangesElsewhere(db) }
    }

    func takeChangesElsewhere(_ db: Database) throws -> Bool {
        if isReadOnly { return false }
        let version = try dataVersion(db)
        return caughtUpDataVersion.withLock { caughtUp in
            defer { caughtUp = version }
            return caughtUp != version
        }
    }

    /// Forgets what was caught up with, so that the next look reports changes: for when a catch-up,
    /// or a change that took them, failed before the client heard of them.
    public func forgetCaughtUp() {
        caughtUpDataVersion.withLock { $0 = nil }
    }

    /// Starts from the store as it is when opened.
    func noteCaughtUp() throws {
        try writer.writeWithoutTransaction { db in _ = try takeChangesElsewhere(db) }
    }

    private func dataVersion(_ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "PRAGMA data_version"))
    }
}
