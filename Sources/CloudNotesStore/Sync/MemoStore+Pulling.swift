import GRDB

// MARK: - Applying other devices' revisions

/// A segment read from another device, or a part of its snapshot, checked by the reader (see
/// protocol/sync.md).
public struct PulledSegment: Sendable {
    public var device: String
    /// The segment's number; for a snapshot's part, the last segment the snapshot stands for.
    public var number: Int64
    /// The SHA-256 of the segment's bytes (for a snapshot, of its last segment's): the next segment's
    /// `previous` must name it.
    public var hash: String
    public var revisions: [Revision]
    /// How many segments of the device must have been applied before this one.
    public var follows: Int64
    /// Whether applying it moves the read position to `number`: not for a snapshot's parts but the last.
    public var advancing: Bool

    public init(device: String, number: Int64, hash: String, revisions: [Revision], follows: Int64? = nil, advancing: Bool = true) {
        self.device = device
        self.number = number
        self.hash = hash
        self.revisions = revisions
        self.follows = follows ?? number - 1
        self.advancing = advancing
    }
}

/// What applying pulled revisions did to the memos.
public struct PullOutcome: Sendable, Hashable {
    /// The memos that changed here in a way a front end sees.
    public var changedMemos = ChangedMemos()
    /// Conflicts met (each kept as a conflict copy).
    public var conflicts = 0
    /// How many times a memo was brought to a pulled state that a front end sees: a memo counts again
    /// in each transaction that moves it, which `changedMemos` does not tell.
    var visibleAdoptions = 0
    public init() {}
}

/// How far this device has read another device's segments.
public struct ReadPosition: Sendable, Hashable {
    public var applied: Int64
    /// The hash of the last applied segment ("" before the first).
    public var lastHash: String

    /// Before the first segment: nothing read yet.
    public static let start = ReadPosition(applied: 0, lastHash: "")
}

extension MemoStore {
    /// How far this device has read `device`'s segments on the current remote.
    public func readPosition(of device: String) throws -> ReadPosition {
        try writer.read { db in
            try Row.fetchOne(db, sql: "SELECT applied, lastHash FROM remoteDevice WHERE device = ?", arguments: [device])
                .map { ReadPosition(applied: $0["applied"], lastHash: $0["lastHash"]) } ?? .start
        }
    }

    /// The most revisions applied between two looks for a write waiting for its turn (a memo's revisions
    /// are never split): a keystroke waits for one part, not for a whole segment of up to 1,000
    /// revisions.
    public static let revisionsPerApplyPart = 100

    /// Applies a pulled segment: stores its revisions, brings their memos up to date where the
    /// revisions follow the memo's head, and advances the read position. Returns nil when the segment
    /// is not the next one of its device (another process applied it).
    ///
    /// A memo edited concurrently here and elsewhere is not merged yet: it waits for
    /// `mergeWaitingMemos`, which a sync calls once it has read every device. Merging as each segment
    /// arrived made merges from part of another device's edits; devices that had read different parts
    /// made different merges, published them, and went on merging each other's merges without end.
    ///
    /// The segment is applied in parts (`applyParts`). After each, the transaction commits if another
    /// write of this process waits for its turn (`WriteTurns`), or always with `committingEveryPart`,
    /// and the rest follows in a new one; the last advances the read position. Alone, a segment is one
    /// transaction: committing each part would log the pages of the ids' indexes again each time (half
    /// as much written again in a first sync). Each part holds every revision of its memos, and a memo
    /// is resolved with all of them. What needs every revision of the segment waits for the last part:
    /// the conflicts that other devices merged (a conflict copy and its memo's merge can be in different
    /// parts). A sync stopped between two transactions reads the segment again: the revisions already
    /// stored, and their memos, were resolved in the transaction that stored them, and are skipped.
    public func apply(_ segment: PulledSegment, rules: some RevisionRules, now: Int64,
                      revisionsPerPart: Int = revisionsPerApplyPart, committingEveryPart: Bool = false) throws -> PullOutcome? {
        let parts = Self.applyParts(of: segment.revisions, size: revisionsPerPart)
        var outcome = PullOutcome()
        var next = 0
        while next < parts.count {
            let first = next
            let applied = try write { db -> Bool in
                let position = try Row.fetchOne(db, sql: "SELECT applied FROM remoteDevice WHERE device = ?",
                                                arguments: [segment.device]).map { $0["applied"] as Int64 } ?? 0
                guard position == segment.follows else { return false }
                let adoptionsBefore = outcome.visibleAdoptions
                repeat {
                    try apply(part: parts[next], of: segment, rules: rules, now: now, outcome: &outcome, db)
                    next += 1
                } while next < parts.count && !committingEveryPart && writeTurns.askedFor <= 1
                if next == parts.count {
                    for merge in segment.revisions where merge.parents.count == 2 {
                        try noteConflictMergedElsewhere(memo: merge.memo, parents: merge.parents, rules: rules, now: now, db)
                    }
                    if segment.advancing {
                        try db.execute(sql: "INSERT OR REPLACE INTO remoteDevice (device, applied, lastHash) VALUES (?, ?, ?)",
                                       arguments: [segment.device, segment.number, segment.hash])
                    }
                }
                if outcome.visibleAdoptions > adoptionsBefore { try countVisibleChange(db) }
                return true
            }
            // Another process applied the segment meanwhile; the parts applied here stand.
            guard applied else { return first == 0 ? nil : outcome }
        }
        return outcome
    }

    /// Stores the revisions of one part of `segment` and resolves their memos, short of merging.
    private func apply(part: [Revision], of segment: PulledSegment, rules: some RevisionRules, now: Int64,
                       outcome: inout PullOutcome, _ db: Database) throws {
        var touched = Set<String>()
        var arrived = Set<String>()
        for revision in part where try revision.insert(toPublish: false, from: segment.device, segment: segment.number, db) {
            touched.insert(revision.memo)
            arrived.insert(revision.id)
        }
        for memo in touched.sorted() {
            try resolve(memo: memo, arrived: arrived, merging: false, rules: rules, now: now, outcome: &outcome, db)
        }
    }

    /// Resolves every memo that waits (see `resolve`), merging where its revisions are concurrent, a
    /// transaction for each `memosPerPart` memos so that a keystroke waits for one part at most. A memo
    /// whose history still misses a revision goes on waiting.
    /// Stops with `StoreError.cancelled` between two parts when `isCancelled`.
    public func mergeWaitingMemos(rules: some RevisionRules, now: Int64, memosPerPart: Int = revisionsPerApplyPart,
                                  isCancelled: () -> Bool = { false }) throws -> PullOutcome {
        let waiting = try writer.read { db in try String.fetchAll(db, sql: "SELECT memo FROM waitingMemo ORDER BY memo") }
        var outcome = PullOutcome()
        for start in stride(from: 0, to: waiting.count, by: max(memosPerPart, 1)) {
            if isCancelled() { throw StoreError.cancelled }
            try write { db in
                let adoptionsBefore = outcome.visibleAdoptions
                for memo in waiting[start..<min(start + max(memosPerPart, 1), waiting.count)] {
                    try resolve(memo: memo, arrived: [], merging: true, rules: rules, now: now, outcome: &outcome, db)
                }
                if outcome.visibleAdoptions > adoptionsBefore { try countVisibleChange(db) }
            }
        }
        return outcome
    }

    /// `revisions` in parts of about `size`, in order, each holding every revision of its memos (a memo
    /// joins the part where it first appears, with its revisions in their order); one part, empty,
    /// for no revisions, so that the read position still advances.
    static func applyParts(of revisions: [Revision], size: Int) -> [[Revision]] {
        var parts: [[Revision]] = [[]]
        var partOfMemo: [String: Int] = [:]
        for revision in revisions {
            if let part = partOfMemo[revision.memo] {
                parts[part].append(revision)
                continue
            }
            if parts[parts.count - 1].count >= size { parts.append([]) }
            partOfMemo[revision.memo] = parts.count - 1
            parts[parts.count - 1].append(revision)
        }
        return parts
    }

    /// Forgets how far `device` was read, so that it is read again from its first segment.
    public func forgetReadPosition(of device: String) throws {
        try write { db in try db.execute(sql: "DELETE FROM remoteDevice WHERE device = ?", arguments: [device]) }
    }

    /// Lists the conflict of another device's merge of `parents` in `memo`, if that device made a conflict
    /// copy of a parent's text. The copy is published before its merge, so it is known by the time the
    /// merge is; the parent may not be (a merge can arrive before a revision it merges, which another
    /// device published), so a merge is looked at when it arrives and again when a parent does.
    private func noteConflictMergedElsewhere(memo: String, parents: [String], rules: some RevisionRules, now: Int64,
                                             _ db: Database) throws {
        for parent in parents {
            guard let losingText = try Revision.fetch(id: parent, db)?.content.text else { continue }
            let copy = rules.conflictCopyID(memo: memo, losingText: losingText)
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM revision WHERE memo = ?)"),
                                    arguments: [copy]) == true else { continue }
            try db.execute(sql: "INSERT OR IGNORE INTO syncConflict (copy, memo, at) VALUES (?, ?, ?)",
                           arguments: [copy, memo, now])
        }
    }

    // MARK: Resolving one memo

    /// Brings `memo` to the merge of its head and every newer revision known here whose history is
    /// complete. The memo waits (table `waitingMemo`) while a revision still misses parents, and, unless
    /// `merging`, when a merge is needed. `arrived`: the revisions just stored.
    private func resolve(memo id: String, arrived: Set<String>, merging: Bool, rules: some RevisionRules, now: Int64,
                         outcome: inout PullOutcome, _ db: Database) throws {
        let local = try StoredMemo.fetchOne(db.cachedStatement(sql: "SELECT * FROM memo WHERE id = ?"), arguments: [id])
        // An import still adding this memo owns it until it finishes.
        if local?.importing == true { return }
        let head = try local.map { try pack($0, rules: rules, db) } ?? Self.head(of: id, db)?.revision
        var graph = try RevisionGraph.load(memo: id, afterReading: merging, db)
        // Merges stored before a revision they merge: whether they kept a conflict copy could not be
        // told then.
        for (merge, mergeParents) in graph.parents
        where mergeParents.count == 2 && !arrived.contains(merge) && mergeParents.contains(where: arrived.contains) {
            try noteConflictMergedElsewhere(memo: id, parents: mergeParents, rules: rules, now: now, db)
        }
        // The leaves are folded in id order, starting from none, not from the local head (itself a
        // leaf or behind one): devices that know the same revisions then make the same merges.
        var current: String?
        for leaf in try merging ? RevisionGraph.leavesAfterReading(&graph, db) : graph.leaves() {
            guard let base = current, !graph.ancestry(of: base).contains(leaf) else {
                if current == nil { current = leaf }
                continue
            }
            if graph.ancestry(of: leaf).contains(base) {
                current = leaf
                continue
            }
            guard merging else {
                try db.execute(sql: "INSERT OR IGNORE INTO waitingMemo (memo) VALUES (?)", arguments: [id])
                return
            }
            let merged = try merge(memo: id, base, leaf, graph: &graph, rules: rules, now: now, outcome: &outcome, db)
            graph.add(merged, parents: [base, leaf].sorted())
            current = merged
        }
        if current == nil { current = head }
        let waiting = graph.parents.keys.contains { !graph.isComplete($0) }
        try db.execute(sql: waiting ? "INSERT OR IGNORE INTO waitingMemo (memo) VALUES (?)" : "DELETE FROM waitingMemo WHERE memo = ?",
                       arguments: [id])
        guard let current, current != head, let revision = try Revision.fetch(id: current, db) else { return }
        if let changed = try adopt(revision, over: local, now: now, db) {
            outcome.changedMemos.insert(changed)
            outcome.visibleAdoptions += 1
        }
    }

    /// Makes the merge revision of the concurrent revisions `a` and `b`, and the conflict copy if the
    /// merge needs one; returns the merge revision's id.
    private func merge(memo: String, _ a: String, _ b: String, graph: inout RevisionGraph, rules: some RevisionRules,
                       now: Int64, outcome: inout PullOutcome, _ db: Database) throws -> String {
        guard let left = try Revision.fetch(id: min(a, b), db), let right = try Revision.fetch(id: max(a, b), db) else {
            throw StoreError.writeFailed("a revision of memo \(memo) is missing")
        }
        // With several candidate bases, the first that merges cleanly: a conflict against one base can
        // be an edit the other side has already seen through the other.
        let bases: [RevisionContent?] = try graph.mergeBases(left.id, right.id).compactMap { try Revision.fetch(id: $0, db)?.content }
        let results = (bases.isEmpty ? [nil] : bases).lazy.map { rules.merge(memo: memo, left, right, base: $0) }
        let result = results.first { $0.conflictCopy == nil } ?? results.first!
        let parents = [left.id, right.id]
        let merged = Revision(id: rules.revisionID(memo: memo, parents: parents, content: result.content),
                              memo: memo, parents: parents, content: result.content)
        if let copy = result.conflictCopy {
            // The copy goes first, so that it is published no later than the merge: a device that
            // reads the merge knows the copy by then, and lists the conflict too.
            let copyRevision = Revision(id: rules.revisionID(memo: copy.memo, parents: [], content: copy.content),
                                        memo: copy.memo, parents: [], content: copy.content)
            try copyRevision.insert(toPublish: true, db)
            try db.execute(sql: "INSERT OR IGNORE INTO syncConflict (copy, memo, at) VALUES (?, ?, ?)",
                           arguments: [copy.memo, memo, now])
            outcome.conflicts += 1
            try resolve(memo: copy.memo, arrived: [], merging: true, rules: rules, now: now, outcome: &outcome, db)
        }
        try merged.insert(toPublish: true, db)
        return merged.id
    }

    /// Makes the memo what `revision` says, as one more version of it; returns its local id if that
    /// changed anything a front end sees, nil if not.
    ///
    /// The text it replaces is kept as a version (it came from someone else); a tombstone puts the
    /// memo in the trash, dated by the delete, and a text takes it out again.
    private func adopt(_ revision: Revision, over local: StoredMemo?, now: Int64, _ db: Database) throws -> Int64? {
        let seq = try Self.nextSeq(db)
        let author = try Revision.author(of: revision.id, parents: revision.parents, db)
        if var memo = local {
            // A live memo moves in the list even when only its date changes; a tombstone stays unseen.
            let visible = !(memo.deleted && revision.content.deleted)
            cacheRemove(memo)
            if let text = revision.content.text {
                // Kept also from the trash: a text deleted here may be in no revision.
                if !memo.text.hasSameBytes(as: text) { try keepVersion(of: memo, replacedBy: author, now: now, db) }
                if memo.deleted || !memo.text.hasSameBytes(as: text) { memo.author = author.stored }
                memo.setText(text)
                memo.deleted = false
                memo.trashedAt = nil
            } else {
                if !memo.deleted { memo.trashedAt = try Self.isWorthTrashing(memo, db) ? revision.content.modifiedAt : nil }
                memo.deleted = true
                memo.indexed = false
            }
            memo.createdAt = revision.content.createdAt
            memo.modifiedAt = revision.content.modifiedAt
            memo.version += 1
            memo.seq = seq
            try memo.update(db)
            if !memo.deleted { try cacheInsert(memo, db) }
            try Self.setHead(of: memo.id, to: revision.id, seq: seq, db)
            return visible ? try memo.storedLocalID : nil
        }
        guard let text = revision.content.text else {
            // A memo this device never had, deleted elsewhere: its history is kept, and its last text
            // goes to the trash here too.
            try trashNewlyKnown(revision, seq: seq, db)
            return nil
        }
        var memo = StoredMemo(id: revision.memo, text: text, createdAt: revision.content.createdAt,
                              modifiedAt: revision.content.modifiedAt, seq: seq)
        memo.author = author.stored
        try memo.insert(db)
        try cacheInsert(memo, db)
        try Self.setHead(of: memo.id, to: revision.id, seq: seq, db)
        return try memo.storedLocalID
    }

    /// Puts in the trash a memo first known here by its tombstone `revision`, with the text of the
    /// revision it deleted (through tombstones merged with each other: the latest text they deleted),
    /// when that is known and not blank; else keeps only its history.
    private func trashNewlyKnown(_ revision: Revision, seq: Int64, _ db: Database) throws {
        let deleted = try Self.textsDeleted(by: revision.parents, db).max { $0.content.modifiedAt < $1.content.modifiedAt }
        guard let deleted, let deletedText = deleted.content.text, !deletedText.isBlank else {
            try Self.setHead(of: revision.memo, to: revision.id, seq: 0, db)
            return
        }
        var memo = StoredMemo(id: revision.memo, text: deletedText, createdAt: revision.content.createdAt,
                              modifiedAt: revision.content.modifiedAt, seq: seq)
        memo.deleted = true
        memo.trashedAt = revision.content.modifiedAt
        memo.author = try Revision.author(of: deleted.id, parents: [], db).stored
        try memo.insert(db)
        try Self.setHead(of: memo.id, to: revision.id, seq: seq, db)
    }

    /// The live revisions nearest below `ids` (which may be tombstones), as far as they are stored.
    static func textsDeleted(by ids: [String], _ db: Database) throws -> [Revision] {
        var found: [Revision] = []
        var seen = Set<String>()
        var stack = ids
        while let next = stack.popLast() {
            guard seen.insert(next).inserted, let revision = try Revision.fetch(id: next, db) else { continue }
            if revision.content.deleted { stack.append(contentsOf: revision.parents) } else { found.append(revision) }
        }
        return found
    }
}
