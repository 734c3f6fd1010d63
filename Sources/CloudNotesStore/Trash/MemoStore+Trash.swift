import Foundation
import GRDB

// MARK: - The trash

/// A memo in the trash, as `trash/list` shows it.
public struct TrashedMemo: Sendable, Hashable {
    public var id: String
    public var title: String
    public var preview: String
    /// When it was deleted (milliseconds since the Unix epoch).
    public var trashedAt: Int64
    /// When its last change before the delete was made.
    public var modifiedAt: Int64
}

extension MemoStore {
    /// Whether a memo being deleted goes to the trash: not a blank one that keeps no version, which
    /// leaves nothing to bring back (rule S5 discards such memos as the selection leaves them).
    static func isWorthTrashing(_ memo: StoredMemo, _ db: Database) throws -> Bool {
        if !memo.text.isBlank { return true }
        return try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM memoVersion WHERE memo = ?)"),
                                 arguments: [memo.storedLocalID]) ?? false
    }

    /// The memos in the trash, most recently deleted first: `limit` of them from `offset`, and how many there are.
    public func trash(offset: Int, limit: Int) throws -> (total: Int, memos: [TrashedMemo]) {
        try writer.read { db in
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE trashedAt IS NOT NULL") ?? 0
            let memos = try Row.fetchAll(db, sql: """
                SELECT id, title, preview, trashedAt, modifiedAt FROM memo WHERE trashedAt IS NOT NULL
                ORDER BY trashedAt DESC, seq DESC LIMIT ? OFFSET ?
                """, arguments: [limit, offset]).map {
                    TrashedMemo(id: $0["id"], title: $0["title"], preview: $0["preview"], trashedAt: $0["trashedAt"],
                                modifiedAt: $0["modifiedAt"])
                }
            return (total, memos)
        }
    }

    /// Brings memo `id` back from the trash with its text and versions, as a change made now: it
    /// enters the list at the top, and sync takes it back on every device.
    public func undelete(id: String, now: Int64, filter: SearchFilter?) throws -> ListChange {
        try write { db in
            guard var memo = try StoredMemo.fetchOne(db.cachedStatement(sql: """
                SELECT * FROM memo WHERE id = ? AND deleted AND trashedAt IS NOT NULL AND importBatch IS NULL
                """), arguments: [id]) else { throw StoreError.memoNotFound(id: id) }
            memo.deleted = false
            memo.trashedAt = nil
            memo.indexed = false  // the background indexer takes it again; searches read it meanwhile
            memo.modifiedAt = max(now, memo.modifiedAt)
            memo.version += 1
            memo.seq = try Self.nextSeq(db)
            try memo.saveChange(db)
            try cacheInsert(memo, db)
            return try noting(ListChange(memo: memo, indexBefore: nil, indexAfter: try index(of: memo, filter: filter, db)),
                              filter: filter, db)
        }
    }

    /// Purges the memos deleted before `cutoff` (all of them when nil): their texts and versions go,
    /// their tombstones stay for sync. A hundred memos per transaction, and none when there is nothing to
    /// purge; returns how many it purged.
    @discardableResult
    public func purgeTrash(deletedBefore cutoff: Int64?) throws -> Int {
        let cutoff = cutoff ?? Int64.max
        var purged = 0
        while true {
            let localIDs = try serialized { db in
                try Int64.fetchAll(db, sql: "SELECT localID FROM memo WHERE trashedAt < ? LIMIT 100", arguments: [cutoff])
            }
            guard !localIDs.isEmpty else { return purged }
            purged += try write { db in
                var count = 0
                for localID in localIDs {
                    // Still in the trash: another process may have brought it back meanwhile.
                    try db.cachedStatement(sql: """
                        UPDATE memo SET text = X'', title = '', preview = '', trashedAt = NULL WHERE localID = ? AND trashedAt < ?
                        """).execute(arguments: [localID, cutoff])
                    guard db.changesCount > 0 else { continue }
                    try db.cachedStatement(sql: "DELETE FROM memoVersion WHERE memo = ?").execute(arguments: [localID])
                    count += 1
                }
                return count
            }
        }
    }

    /// Purges what the policy no longer keeps: memos in the trash longer than `trashDays`, and versions
    /// beyond `keepHistoryDays` (see `HistoryPolicy`).
    public func applyHistoryPolicy(now: Int64) throws -> (purgedMemos: Int, prunedVersions: Int) {
        let days = Int64(historyPolicy.trashDays)
        let purged = try purgeTrash(deletedBefore: now - days * HistoryPolicy.dayMilliseconds)
        return (purged, try pruneHistory(now: now))
    }
}
