import GRDB

// MARK: - Packing local changes into revisions

extension MemoStore {
    /// Makes a revision of every memo changed here since the last packing, in batches of
    /// `batchSize` memos per transaction; returns how many revisions it made.
    ///
    /// A keystroke makes no revision: a memo edited a thousand times between two syncs makes one.
    /// The memo's `seq` tells whether it changed since its head revision, so editing costs nothing more.
    public func packLocalChanges(rules: some RevisionRules, batchSize: Int = 1000) throws -> Int {
        var made = 0
        while true {
            let (count, more) = try write { db -> (Int, Bool) in
                let packedSeq = try Int64.fetchOne(db, sql: "SELECT packedSeq FROM syncState") ?? 0
                // Memos of an unfinished import are left for later: publishing one renumbers them all.
                let memos = try StoredMemo.fetchAll(db.cachedStatement(sql: """
                    SELECT * FROM memo WHERE seq > ? AND importBatch IS NULL ORDER BY seq LIMIT ?
                    """), arguments: [packedSeq, batchSize])
                var count = 0
                for memo in memos {
                    let before = try Self.head(of: memo.id, db)
                    if try pack(memo, rules: rules, db) != before?.revision { count += 1 }
                }
                if let last = memos.last {
                    try db.execute(sql: "UPDATE syncState SET packedSeq = ?", arguments: [last.seq])
                }
                return (count, memos.count == batchSize)
            }
            made += count
            if !more { return made }
        }
    }

    /// The memo's head revision once its local changes, if any, are a revision; nil when the memo
    /// has none (it was made and deleted here without ever being packed).
    @discardableResult
    func pack(_ memo: StoredMemo, rules: some RevisionRules, _ db: Database) throws -> String? {
        let head = try Self.head(of: memo.id, db)
        if let head, head.seq == memo.seq { return head.revision }
        var headRevision = try head.flatMap { try Revision.fetch(id: $0.revision, db) }
        if memo.deleted, memo.trashedAt != nil, !memo.text.isEmpty,
           headRevision.map({ $0.content.text.map { !$0.hasSameBytes(as: memo.text) } ?? false }) ?? true {
            // Deleted here with a text no revision holds (written since the last sync, or never synced):
            // the text goes first, then its delete, so that the memo is in every device's trash as it
            // was deleted, and an undelete anywhere brings that text back.
            var live = memo
            live.deleted = false
            headRevision = try Revision.fetch(id: pack(live, rules: rules, db) ?? "", db)
        }
        let content = RevisionContent(
            text: memo.deleted ? nil : memo.text, createdAt: memo.createdAt, modifiedAt: memo.modifiedAt)
        let unchanged = headRevision.map { head in
            switch (head.content.text, content.text) {
            case (nil, nil): true
            case let (old?, new?): old.hasSameBytes(as: new)  // bytes, not canonical equality
            default: false
            }
        } ?? content.deleted
        if unchanged {
            if let head { try Self.setHead(of: memo.id, to: head.revision, seq: memo.seq, db) }
            return head?.revision
        }
        let parents = headRevision.map { [$0.id] } ?? []
        let revision = Revision(
            id: rules.revisionID(memo: memo.id, parents: parents, content: content),
            memo: memo.id, parents: parents, content: content)
        try revision.insert(toPublish: true, db)
        try Self.setHead(of: memo.id, to: revision.id, seq: memo.seq, db)
        return revision.id
    }

    // MARK: Heads

    /// A memo's latest revision: the last one this device made of it, or the one it last took from the remote.
    struct Head {
        var revision: String
        /// The memo's `seq` when its state was that of `revision`.
        var seq: Int64
    }

    static func head(of memo: String, _ db: Database) throws -> Head? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT revision, seq FROM memoHead WHERE memo = ?"), arguments: [memo])
            .map { Head(revision: $0["revision"], seq: $0["seq"]) }
    }

    static func setHead(of memo: String, to revision: String, seq: Int64, _ db: Database) throws {
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO memoHead (memo, revision, seq) VALUES (?, ?, ?)")
            .execute(arguments: [memo, revision, seq])
    }
}
