import GRDB

// MARK: - Sync state

/// Where this store stands with its remote: kept in the store, so that it survives restarts.
public struct SyncState: Sendable, Hashable {
    /// This store's device id on every remote (32 hex digits).
    public var device: String
    /// The remote's URL (never with credentials), or nil when the store does not sync.
    public var remote: String?
    /// How many segments this device has published on the remote.
    public var published: Int64
    /// The SHA-256 of the last published segment ("" when none).
    public var publishedHash: String
    /// When the last sync finished (milliseconds since the epoch), and why it failed, if it did.
    public var lastSyncAt: Int64?
    public var lastError: String?
    /// This device's latest snapshot on the remote, as its head names it (sync's JSON), if any.
    public var snapshot: String?
    /// Bytes of text pruned from this device's published revisions since its latest snapshot.
    public var prunedSinceSnapshot: Int64
    /// Whether the remote was set to be made encrypted (`--encrypt`).
    public var encrypt: Bool
    /// Whether this store holds the remote's data key: the remote is encrypted, and opened here.
    public var holdsKey: Bool
}

/// A conflict that sync kept both sides of: the memo, and the copy holding the other side's text.
public struct SyncConflict: Sendable, Hashable {
    public var memo: String
    public var copy: String
    public var at: Int64
}

extension MemoStore {
    /// The store's sync state, read on the writer connection: the server reads it as it starts, and a
    /// pool's `read` would first open a reader connection, slowing start-up, that nothing else needs.
    public func syncState() throws -> SyncState {
        try writer.writeWithoutTransaction { db in try Self.syncState(db) }
    }

    static func syncState(_ db: Database) throws -> SyncState {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT *, syncKey IS NOT NULL AS holdsKey FROM syncState")) else {
            throw StoreError.writeFailed("the store has no sync state")  // the migration makes it: unreachable
        }
        return SyncState(
            device: row["device"], remote: row["remote"], published: row["published"],
            publishedHash: row["publishedHash"], lastSyncAt: row["lastSyncAt"], lastError: row["lastError"],
            snapshot: row["snapshot"], prunedSinceSnapshot: row["prunedSinceSnapshot"], encrypt: row["encrypt"],
            holdsKey: row["holdsKey"])
    }

    /// Sets the remote. A different remote holds none of what this device published or read, so
    /// everything is published anew there and every device there is read from its start; with
    /// `republish`, also on the same remote (after it lost what this device published), under a new
    /// device id: what the other devices said they took in of the old one says nothing of the new.
    /// Either way the key of an encrypted remote is dropped: the remote there may be another one.
    ///
    /// `encrypt` says whether the remote is to be made encrypted (a remote encrypted already needs no
    /// word); nil leaves that as it was. A remote published on anew stays encrypted if it was.
    public func setRemote(_ remote: String?, republish: Bool = false, encrypt: Bool? = nil) throws {
        try write { db in
            let state = try Self.syncState(db)
            let current = state.remote
            guard republish || current != remote else {
                if let encrypt { try db.execute(sql: "UPDATE syncState SET encrypt = ?", arguments: [encrypt]) }
                return
            }
            // Published anew on the same remote, memos encrypted before stay so.
            let encrypting = (encrypt ?? false) || (current == remote && (state.encrypt || state.holdsKey))
            try db.execute(sql: """
                UPDATE syncState SET remote = ?, published = 0, publishedHash = '', lastSyncAt = NULL, lastError = NULL,
                    snapshot = NULL, prunedSinceSnapshot = 0, syncKey = NULL, encrypt = ?;
                DELETE FROM outgoingRevision;
                INSERT INTO outgoingRevision (revision) SELECT localID FROM revision;
                DELETE FROM remoteDevice;
                DELETE FROM syncHorizon;
                """, arguments: [remote, encrypting])
            if current == remote {
                try db.execute(sql: "UPDATE syncState SET device = lower(hex(randomblob(16)))")
            }
        }
    }

    /// Takes a new device id, when another store publishes under this one's (a copied store file).
    ///
    /// Everything this device published is published anew under the new id, from its first segment:
    /// the other store may have overwritten some of it under the old id (content addresses make the
    /// copies that did survive harmless).
    public func adoptNewDevice(_ device: String) throws {
        try write { db in
            try db.execute(sql: """
                UPDATE outgoingRevision SET segment = NULL WHERE segment IS NOT NULL;
                UPDATE syncState SET device = ?, published = 0, publishedHash = '', snapshot = NULL, prunedSinceSnapshot = 0;
                """, arguments: [device])
        }
    }

    /// Notes the end of a sync: when, and its error if it failed (nil clears the last one).
    public func recordSyncEnd(at time: Int64, error: String?) throws {
        try write { db in
            try db.execute(sql: "UPDATE syncState SET lastSyncAt = coalesce(?, lastSyncAt), lastError = ?",
                           arguments: [error == nil ? time : nil, error])
        }
    }

    /// How many memos have changes this device has not published yet.
    public func unpublishedMemoCount() throws -> Int {
        try writer.read { db in
            try Int.fetchOne(db, sql: """
                SELECT count(*) FROM (
                    SELECT r.memo FROM outgoingRevision o JOIN revision r ON r.localID = o.revision WHERE o.segment IS NULL
                    UNION
                    SELECT m.id FROM memo m LEFT JOIN memoHead h ON h.memo = m.id
                    WHERE m.seq > (SELECT packedSeq FROM syncState) AND m.importBatch IS NULL
                      AND (h.seq IS NULL OR h.seq != m.seq) AND NOT (m.deleted AND h.memo IS NULL))
                """) ?? 0
        }
    }

    /// The conflicts whose copy is still there (deleting the copy settles one).
    public func openConflicts() throws -> [SyncConflict] {
        try writer.read { db in
            try Row.fetchAll(db, sql: Self.openConflictsQuery).map { SyncConflict(memo: $0["memo"], copy: $0["copy"], at: $0["at"]) }
        }
    }

    /// The conflicts drive the join (`CROSS JOIN` keeps them the outer loop): without statistics, SQLite
    /// scanned every memo and looked each up among the conflicts, for every `sync/status`.
    static let openConflictsQuery = """
        SELECT c.memo, c.copy, c.at FROM syncConflict c CROSS JOIN memo m ON m.id = c.copy
        WHERE m.deleted = 0 ORDER BY c.at, c.copy
        """
}
