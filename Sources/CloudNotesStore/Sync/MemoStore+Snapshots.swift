import GRDB

// MARK: - This device's snapshots

extension MemoStore {
    /// The next part of the snapshot that stands for this device's segments 1...`covers`: its published
    /// revisions there that pruning kept, after local id `after`, parents first; nil after the last.
    /// Returns the part's revisions and the local id to go on after.
    public func snapshotPart(covers: Int64, after: Int64, maxBytes: Int, maxRevisions: Int) throws -> (revisions: [Revision], last: Int64)? {
        try write { db in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT o.revision AS localID, coalesce(length(r.text), 0) AS size
                FROM outgoingRevision o JOIN revision r ON r.localID = o.revision
                WHERE o.segment <= ? AND o.revision > ? ORDER BY o.revision
                """, arguments: [covers, after])
            guard let last = try Self.lastOfSegment(rows, maxBytes: maxBytes, maxRevisions: maxRevisions) else { return nil }
            var revisions = try Row.fetchAll(db, sql: """
                SELECT \(Revision.columns) FROM revision
                WHERE localID IN (SELECT revision FROM outgoingRevision WHERE segment <= ? AND revision > ? AND revision <= ?)
                ORDER BY localID
                """, arguments: [covers, after, last]).map(Revision.init(row:))
            try Self.completeGenerationsAndCuts(&revisions, db)
            return (revisions, last)
        }
    }

    /// The bytes of text a snapshot standing for this device's segments 1...`covers` would hold.
    public func snapshotBytes(covers: Int64) throws -> Int64 {
        try writer.read { db in
            try Int64.fetchOne(db, sql: """
                SELECT coalesce(sum(length(r.text)), 0) FROM outgoingRevision o JOIN revision r ON r.localID = o.revision
                WHERE o.segment <= ?
                """, arguments: [covers]) ?? 0
        }
    }

    /// Records the snapshot this device's head now names (sync's JSON), once the files it supersedes
    /// are removed; the count of text pruned since the last one starts again.
    public func recordSnapshot(_ snapshot: String?) throws {
        try write { db in
            try db.execute(sql: "UPDATE syncState SET snapshot = ?, prunedSinceSnapshot = 0", arguments: [snapshot])
        }
    }
}
