import Foundation
import GRDB

// MARK: - Versions

/// Who a store's changes are by, and what of the history it keeps.
struct HistorySettings: Sendable {
    var author = Author.newSession(.edit)
    var policy = HistoryPolicy()
}

/// One kept version of a memo, without its text.
public struct VersionInfo: Sendable, Hashable {
    /// The version's number, counted per memo from 1: stable, also when older ones are pruned.
    public var number: Int64
    /// When the text was written (milliseconds since the Unix epoch).
    public var savedAt: Int64
    /// Who wrote it; nil when unknown (written before versions were kept).
    public var author: Author?
    /// The memo's title when it had this text (empty for the placeholder).
    public var title: String
    /// The text's length in UTF-8 bytes.
    public var size: Int
}

/// One kept version of a memo, with its text.
public struct MemoVersion: Sendable, Hashable {
    public var info: VersionInfo
    public var text: String
}

extension MemoStore {
    /// Changes made through this store from now on are by a new session of `kind` (the shell's: `.shell`).
    public func authorChanges(as kind: Author.Kind) {
        history.withLock { $0.author = Author.newSession(kind) }
    }

    /// What of the history this store keeps (see `HistoryPolicy`).
    public var historyPolicy: HistoryPolicy {
        get { history.withLock { $0.policy } }
        set { history.withLock { $0.policy = newValue } }
    }

    /// The author of this store's changes.
    var author: Author { history.withLock { $0.author } }

    // MARK: Reading

    /// The versions of memo `id` (live or in the trash), newest first: `limit` of them from `offset`,
    /// and how many there are.
    public func versions(ofMemo id: String, offset: Int, limit: Int) throws -> (total: Int, versions: [VersionInfo]) {
        try writer.read { db in
            let localID = try Self.localIDWithHistory(id: id, db)
            let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM memoVersion WHERE memo = ?", arguments: [localID]) ?? 0
            let versions = try Row.fetchAll(db, sql: """
                SELECT number, savedAt, author, title, length(text) AS size FROM memoVersion
                WHERE memo = ? ORDER BY number DESC LIMIT ? OFFSET ?
                """, arguments: [localID, limit, offset]).map(VersionInfo.init(row:))
            return (total, versions)
        }
    }

    /// Version `number` of memo `id` (live or in the trash), with its text.
    public func version(ofMemo id: String, number: Int64) throws -> MemoVersion {
        try writer.read { db in try Self.version(localID: try Self.localIDWithHistory(id: id, db), id: id, number: number, db) }
    }

    /// The local id of memo `id` if it is live or in the trash: the memos that have a history to show.
    static func localIDWithHistory(id: String, _ db: Database) throws -> Int64 {
        guard let localID = try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT localID FROM memo WHERE id = ? AND importBatch IS NULL AND (deleted = 0 OR trashedAt IS NOT NULL)
            """), arguments: [id]) else { throw StoreError.memoNotFound(id: id) }
        return localID
    }

    static func version(localID: Int64, id: String, number: Int64, _ db: Database) throws -> MemoVersion {
        guard let row = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT number, savedAt, author, title, length(text) AS size, text FROM memoVersion WHERE memo = ? AND number = ?
            """), arguments: [localID, number]) else { throw StoreError.versionNotFound(id: id, number: number) }
        return MemoVersion(info: VersionInfo(row: row), text: String(storedUTF8: row["text"] as Data))
    }

    // MARK: Keeping

    /// Keeps `memo`'s current text as a version before `author` replaces it, unless the same editing
    /// session replaces its own text before it has rested: a burst of typing keeps at most one.
    ///
    /// A blank text, or the same text as the newest version (a restore undone), is not kept again.
    func keepVersion(of memo: StoredMemo, replacedBy author: Author, now: Int64, _ db: Database) throws {
        let pause = history.withLock { $0.policy.versionPause }
        if memo.author == author.stored, [.edit, .shell, .assistant].contains(author.kind), now - memo.modifiedAt < pause { return }
        guard let localID = memo.localID, !memo.text.isBlank else { return }
        let text = Data(memo.text.utf8)
        let newest = try Row.fetchOne(db.cachedStatement(sql: """
            SELECT number, text = ? AS same FROM memoVersion WHERE memo = ? ORDER BY number DESC LIMIT 1
            """), arguments: [text, localID])
        if let newest, newest["same"] as Bool { return }
        try db.cachedStatement(sql: """
            INSERT INTO memoVersion (memo, number, savedAt, author, title, text) VALUES (?, ?, ?, ?, ?, ?)
            """).execute(arguments: [localID, (newest?["number"] as Int64? ?? 0) + 1, memo.modifiedAt, memo.author, memo.title, text])
    }

    // MARK: Pruning

    /// Prunes the versions beyond the policy (see `HistoryPolicy.keepHistoryDays`), a hundred memos per
    /// transaction; returns how many it removed.
    @discardableResult
    public func pruneHistory(now: Int64) throws -> Int {
        let policy = historyPolicy
        // Versions younger than this are all kept: a memo with none older has nothing to prune.
        let thinFrom = now - Int64(min(7, max(policy.keepHistoryDays, 0))) * HistoryPolicy.dayMilliseconds
        let memos = try serialized { db in
            try Int64.fetchAll(db, sql: "SELECT DISTINCT memo FROM memoVersion WHERE savedAt < ? ORDER BY memo", arguments: [thinFrom])
        }
        var removed = 0
        for start in stride(from: 0, to: memos.count, by: 100) {
            removed += try write { db in
                var count = 0
                for memo in memos[start..<min(start + 100, memos.count)] {
                    let versions = try Row.fetchAll(db.cachedStatement(sql: "SELECT localID, savedAt FROM memoVersion WHERE memo = ?"),
                                                    arguments: [memo]).map { (localID: $0[0] as Int64, savedAt: $0[1] as Int64) }
                    for localID in Self.versionsToPrune(versions, now: now, keepDays: policy.keepHistoryDays) {
                        try db.cachedStatement(sql: "DELETE FROM memoVersion WHERE localID = ?").execute(arguments: [localID])
                        count += 1
                    }
                }
                return count
            }
        }
        return removed
    }

    /// The versions the policy drops: it keeps every version from the last 7 days, the newest of each
    /// calendar day (UTC) for 30 days, and the newest of each week up to `keepDays`, none older.
    static func versionsToPrune(_ versions: [(localID: Int64, savedAt: Int64)], now: Int64, keepDays: Int) -> [Int64] {
        let day = HistoryPolicy.dayMilliseconds
        let keep = Int64(max(keepDays, 0)) * day
        // Each tier: how old its versions are at most, and the span of which it keeps the newest.
        let tiers: [(until: Int64, span: Int64?)] = [(min(7 * day, keep), nil), (min(30 * day, keep), day), (keep, 7 * day)]
        var newestInSpan: [Pair: (localID: Int64, savedAt: Int64)] = [:]
        var dropped: [Int64] = []
        for version in versions {
            let age = now - version.savedAt
            guard let tier = tiers.firstIndex(where: { age < $0.until }) else {
                dropped.append(version.localID)
                continue
            }
            guard let span = tiers[tier].span else { continue }
            let key = Pair(tier: tier, span: version.savedAt >= 0 ? version.savedAt / span : (version.savedAt + 1) / span - 1)
            if let kept = newestInSpan[key] {
                let newer = (version.savedAt, version.localID) > (kept.savedAt, kept.localID)
                dropped.append(newer ? kept.localID : version.localID)
                if newer { newestInSpan[key] = version }
            } else {
                newestInSpan[key] = version
            }
        }
        return dropped.sorted()
    }

    private struct Pair: Hashable {
        var tier: Int
        var span: Int64
    }
}

extension VersionInfo {
    /// Reads a row of `number, savedAt, author, title, size`.
    init(row: Row) {
        self.init(number: row["number"], savedAt: row["savedAt"], author: Author(stored: row["author"]),
                  title: row["title"], size: row["size"])
    }
}
