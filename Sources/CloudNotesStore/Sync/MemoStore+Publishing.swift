import GRDB

// MARK: - Publishing this device's revisions

/// A segment this device is publishing: its number and its revisions, parents first.
public struct OutgoingSegment: Sendable, Hashable {
    public var number: Int64
    public var revisions: [Revision]

    public init(number: Int64, revisions: [Revision]) {
        self.number = number
        self.revisions = revisions
    }
}

extension MemoStore {
    /// The next segment to publish, or nil when every revision is published.
    ///
    /// The revisions are recorded as segment `published + 1` before anything is uploaded, and a
    /// segment once recorded is returned again until `markPublished`: a retry after a crash or a
    /// network failure uploads the very same segment.
    public func segmentToPublish(maxBytes: Int, maxRevisions: Int) throws -> OutgoingSegment? {
        try write { db in
            let number = try Self.syncState(db).published + 1
            let recorded = try Self.revisions(inSegment: number, db)
            if !recorded.isEmpty { return OutgoingSegment(number: number, revisions: recorded) }
            let rows = try Row.fetchCursor(db, sql: """
                SELECT o.revision AS localID, coalesce(length(r.text), 0) AS size
                FROM outgoingRevision o JOIN revision r ON r.localID = o.revision
                WHERE o.segment IS NULL ORDER BY o.revision
                """)
            guard let last = try Self.lastOfSegment(rows, maxBytes: maxBytes, maxRevisions: maxRevisions) else { return nil }
            try db.execute(sql: "UPDATE outgoingRevision SET segment = ? WHERE segment IS NULL AND revision <= ?",
                           arguments: [number, last])
            return OutgoingSegment(number: number, revisions: try Self.revisions(inSegment: number, db))
        }
    }

    /// Records that segment `number`, whose bytes hash to `hash`, is on `remote` and named by this
    /// device's head. False when the sync state moved meanwhile (the remote was changed, or the store
    /// took a new device id): the caller must stop publishing.
    public func markPublished(number: Int64, hash: String, remote: String?) throws -> Bool {
        try write { db in
            try db.execute(sql: "UPDATE syncState SET published = ?, publishedHash = ? WHERE published = ? AND remote IS ?",
                           arguments: [number, hash, number - 1, remote])
            return db.changesCount == 1
        }
    }

    /// The local id of the last revision that fits in one segment, from `rows` (`localID`, `size`) in
    /// order: at most `maxRevisions`, and `maxBytes` of text unless one revision alone is longer.
    static func lastOfSegment(_ rows: RowCursor, maxBytes: Int, maxRevisions: Int) throws -> Int64? {
        var (count, bytes, last): (Int, Int, Int64?) = (0, 0, nil)
        while let row = try rows.next() {
            let size: Int = row["size"]
            if count > 0, count == maxRevisions || bytes + size > maxBytes { break }
            (count, bytes, last) = (count + 1, bytes + size, row["localID"])
        }
        return last
    }

    /// How many revisions wait to be published.
    public func unpublishedRevisionCount() throws -> Int {
        try writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM outgoingRevision WHERE segment IS NULL") ?? 0 }
    }

    static func revisions(inSegment number: Int64, _ db: Database) throws -> [Revision] {
        var revisions = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT \(Revision.columns) FROM revision
            WHERE localID IN (SELECT revision FROM outgoingRevision WHERE segment = ?) ORDER BY localID
            """),
                         arguments: [number]).map(Revision.init(row:))
        try completeGenerationsAndCuts(&revisions, db)
        return revisions
    }

    /// Gives the revisions stored without a generation (made before sync format 2) theirs, from their
    /// memo's history, and stores it; marks `cut` those whose missing parents were pruned (published
    /// again, after `--republish` or a forget, or in a snapshot). A segment is written the same on every
    /// retry.
    static func completeGenerationsAndCuts(_ revisions: inout [Revision], _ db: Database) throws {
        var graphs: [String: RevisionGraph] = [:]
        for index in revisions.indices {
            let memo = revisions[index].memo
            if revisions[index].generation == nil {
                if graphs[memo] == nil { graphs[memo] = try RevisionGraph.load(memo: memo, db) }
                guard let generation = graphs[memo]?.generation(of: revisions[index].id) else { continue }
                revisions[index].generation = Int64(generation)
                try db.execute(sql: "UPDATE revision SET generation = ? WHERE id = ?", arguments: [generation, revisions[index].id])
            }
            let parents = revisions[index].parents
            if !revisions[index].cut, !parents.isEmpty,
               try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM revision WHERE id IN (?, ?)"),
                                arguments: [parents.first, parents.last]) ?? 0 < parents.count {
                if graphs[memo] == nil { graphs[memo] = try RevisionGraph.load(memo: memo, db) }
                revisions[index].cut = graphs[memo]?.isCut(revisions[index].id) ?? false
            }
        }
    }
}
