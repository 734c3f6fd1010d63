import GRDB

// MARK: - Pruning the sync history

/// What pruning the sync history removed.
public struct PruneOutcome: Sendable, Hashable {
    /// Revisions removed from the store.
    public var revisions = 0
    /// Bytes of text of this device's own published revisions among them: what a snapshot would no
    /// longer carry.
    public var ownBytes: Int64 = 0
    public init() {}
}

extension MemoStore {
    /// Notes, for each device (this one's included), how many of its segments every other device has
    /// taken in: a revision that came in one of them, and lacks a parent, lacks it because it was
    /// pruned (`RevisionGraph.load`). Devices not named have none.
    public func setSyncHorizons(_ horizons: [String: Int64]) throws {
        try write { db in
            try db.execute(sql: "UPDATE syncHorizon SET segments = 0")
            for (device, segments) in horizons {
                try db.execute(sql: """
                    INSERT INTO syncHorizon (device, segments) VALUES (?, ?)
                    ON CONFLICT (device) DO UPDATE SET segments = excluded.segments
                    """, arguments: [device, segments])
            }
        }
    }

    /// Removes the revisions that no device will need again, now that every device known to the remote
    /// has taken in the segments `stable` names (by device, this one's included): the revisions before
    /// a revision in them (protocol/sync.md, "Pruning").
    ///
    /// Every memo of every device descends from a revision all devices have taken in, so the revisions
    /// before it are never again a merge's nearest common ancestor, with two exceptions that are kept:
    /// the parents of the revisions not taken in everywhere yet (a merge with one of those may still
    /// need them), and the text a memo deleted within the trash's days was deleted with (a device that
    /// joins puts it in its trash). What lies between those and later revisions is kept with them, and
    /// a memo's own head is never removed. Works through the memos with
    /// newly taken-in revisions, `memosPerPart` to a transaction; stops with `StoreError.cancelled`
    /// between two parts when `isCancelled`.
    public func pruneRevisions(stable: [String: Int64], now: Int64, policy: HistoryPolicy = HistoryPolicy(),
                               memosPerPart: Int = revisionsPerApplyPart,
                               isCancelled: () -> Bool = { false }) throws -> PruneOutcome {
        let own = try syncState().device
        let memos = try writer.read { db -> [String] in
            var memos = Set<String>()
            for (device, segments) in stable {
                let pruned = try Int64.fetchOne(db, sql: "SELECT pruned FROM syncHorizon WHERE device = ?", arguments: [device]) ?? 0
                guard segments > pruned else { continue }
                memos.formUnion(try String.fetchAll(db, sql: device == own ? """
                    SELECT DISTINCT r.memo FROM outgoingRevision o JOIN revision r ON r.localID = o.revision
                    WHERE o.segment > ? AND o.segment <= ? AND r.parents <> ''
                    """ : """
                    SELECT DISTINCT memo FROM revision WHERE device = ? AND segment > ? AND segment <= ? AND parents <> ''
                    """, arguments: device == own ? [pruned, segments] : [device, pruned, segments]))
            }
            return memos.sorted()
        }
        var outcome = PruneOutcome()
        let trashStart = now - Int64(policy.trashDays) * HistoryPolicy.dayMilliseconds
        for start in stride(from: 0, to: memos.count, by: max(memosPerPart, 1)) {
            if isCancelled() { throw StoreError.cancelled }
            try write { db in
                for memo in memos[start..<min(start + max(memosPerPart, 1), memos.count)] {
                    try prune(memo: memo, stable: stable, own: own, trashStart: trashStart, outcome: &outcome, db)
                }
                try db.execute(sql: "UPDATE syncState SET prunedSinceSnapshot = prunedSinceSnapshot + ?", arguments: [outcome.ownBytes])
            }
            outcome.ownBytes = 0
        }
        try write { db in
            for (device, segments) in stable {
                try db.execute(sql: """
                    INSERT INTO syncHorizon (device, pruned) VALUES (?, ?)
                    ON CONFLICT (device) DO UPDATE SET pruned = max(pruned, excluded.pruned)
                    """, arguments: [device, segments])
            }
        }
        return outcome
    }

    /// Removes the revisions of `memo` that no device will need again (see `pruneRevisions`).
    private func prune(memo: String, stable: [String: Int64], own: String, trashStart: Int64,
                       outcome: inout PruneOutcome, _ db: Database) throws {
        let rows = try Row.fetchAll(db.cachedStatement(sql: """
            SELECT r.localID, r.id, r.parents, r.deleted, r.modifiedAt, r.device, r.segment, o.segment AS published,
                   length(r.text) AS size
            FROM revision r LEFT JOIN outgoingRevision o ON o.revision = r.localID WHERE r.memo = ?
            """), arguments: [memo])
        var parents: [String: [String]] = [:]
        var settled = Set<String>()
        for row in rows {
            let id: String = row["id"], list: String = row["parents"]
            parents[id] = list.isEmpty ? [] : list.split(separator: ",").map(String.init)
            let device: String? = row["device"], segment: Int64? = row["segment"], published: Int64? = row["published"]
            if let device, let segment, segment <= stable[device] ?? 0 { settled.insert(id) }
            if let published, published <= stable[own] ?? 0 { settled.insert(id) }
        }
        // Everything before a revision that every device has taken in.
        var before = Set<String>()
        var stack = settled.flatMap { parents[$0] ?? [] }
        while let next = stack.popLast() {
            guard parents[next] != nil, before.insert(next).inserted else { continue }
            stack.append(contentsOf: parents[next] ?? [])
        }
        let followed = Set(parents.values.joined())
        var kept = Set(parents.filter { !settled.contains($0.key) }.values.joined())
        if let head = try Self.head(of: memo, db)?.revision { kept.insert(head) }
        let deleted = Set(rows.filter { $0["deleted"] }.map { $0["id"] as String })
        for row in rows where row["deleted"] && !followed.contains(row["id"] as String) && row["modifiedAt"] as Int64 >= trashStart {
            // The texts it deleted, through tombstones merged with each other.
            var stack = parents[row["id"] as String] ?? []
            while let next = stack.popLast() {
                guard kept.insert(next).inserted, deleted.contains(next) else { continue }
                stack.append(contentsOf: parents[next] ?? [])
            }
        }
        // What lies between a kept revision and a later one stays too: a device without it would no
        // longer see that the kept one came before, and would merge against another base.
        var children: [String: [String]] = [:]
        for (id, itsParents) in parents { for parent in itsParents { children[parent, default: []].append(id) } }
        var between = Set<String>()
        var walk = Array(kept)
        while let next = walk.popLast() {
            guard between.insert(next).inserted else { continue }
            walk.append(contentsOf: children[next] ?? [])
        }
        let removed = rows.filter { before.contains($0["id"]) && !between.contains($0["id"]) }
        guard !removed.isEmpty else { return }
        // What stays and loses a parent is marked cut, with its generation, while the history that gives
        // it is still here: it is complete as it is from now on.
        // A memo whose history is not whole here keeps it: what is missing may be on its way.
        let removedIDs = Set(removed.map { $0["id"] as String })
        var graph = try RevisionGraph.load(memo: memo, db)
        var cut: [(String, Int)] = []
        for (id, itsParents) in parents where !removedIDs.contains(id) && itsParents.contains(where: removedIDs.contains) {
            guard let generation = graph.generation(of: id) else { return }
            cut.append((id, generation))
        }
        for (id, generation) in cut {
            try db.execute(sql: "UPDATE revision SET cut = 1, generation = ? WHERE id = ?", arguments: [generation, id])
        }
        for row in removed {
            try db.execute(sql: "DELETE FROM revision WHERE localID = ?", arguments: [row["localID"] as Int64])
            try db.execute(sql: "DELETE FROM outgoingRevision WHERE revision = ?", arguments: [row["localID"] as Int64])
            if row["published"] as Int64? != nil { outcome.ownBytes += row["size"] as Int64? ?? 0 }
        }
        outcome.revisions += removed.count
    }
}
