import GRDB

// MARK: - Other devices

extension MemoStore {
    /// How many segments of each other device this store has taken in: read, and every memo brought up
    /// to (or merged with) every revision in them. Nil while a memo waits for a revision not read yet:
    /// what was read is then not all taken in, and the sync publishes what it published before.
    public func takenIn() throws -> [String: Int64]? {
        try writer.read { db in
            guard try Bool.fetchOne(db, sql: "SELECT NOT EXISTS (SELECT 1 FROM waitingMemo)") == true else { return nil }
            var positions: [String: Int64] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT device, applied FROM remoteDevice WHERE applied > 0") {
                positions[row["device"]] = row["applied"]
            }
            return positions
        }
    }

    /// Publishes again, as this device's own, every revision read from `device`, so that devices that
    /// join once its files are gone find them (`cloudnotes sync --forget-device`); forgets how far it
    /// was read. Returns how many revisions wait to be published.
    ///
    /// Revisions read before the store noted their device (schema v9) may be that device's too: they
    /// go again as well, which costs a larger segment once and changes nothing for those who have them.
    public func takeOverRevisions(of device: String) throws -> Int {
        try write { db in
            try db.execute(sql: """
                INSERT INTO outgoingRevision (revision)
                SELECT localID FROM revision
                WHERE (device = ? OR device IS NULL) AND localID NOT IN (SELECT revision FROM outgoingRevision)
                ORDER BY localID
                """, arguments: [device])
            let count = db.changesCount
            try db.execute(sql: "DELETE FROM remoteDevice WHERE device = ?", arguments: [device])
            return count
        }
    }

    /// The other devices this store has read on its remote.
    public func devicesRead() throws -> [String] {
        try writer.read { db in try String.fetchAll(db, sql: "SELECT device FROM remoteDevice") }
    }
}
