import GRDB

// MARK: - Revision graph

/// The history of one memo: which revision follows which. Answers the questions a merge asks
/// (is one an ancestor of the other, which common ancestor is the base) from the history alone.
struct RevisionGraph {
    /// Parents by revision id, for every known revision of the memo.
    private(set) var parents: [String: [String]]
    /// Revisions whose history was pruned: a parent missing here is gone, and they count as complete,
    /// with the generation stored for them (`cutGenerations`).
    private let cutGenerations: [String: Int]
    private var generations: [String: Int?] = [:]

    init(parents: [String: [String]], cutGenerations: [String: Int] = [:]) {
        self.parents = parents
        self.cutGenerations = cutGenerations
    }

    /// The length of the longest path from a root to `id` (a root's is 1), or nil when an ancestor is
    /// missing (a revision whose parents were published on a device this one has not read yet). A
    /// revision whose history was pruned has the generation stored for it.
    ///
    /// Walks with a stack of its own: a memo's history can be thousands of revisions deep.
    mutating func generation(of id: String) -> Int? {
        var stack = [id]
        while let next = stack.last {
            if generations[next] != nil {
                stack.removeLast()
                continue
            }
            guard let itsParents = parents[next] else {
                generations[next] = .some(nil)
                stack.removeLast()
                continue
            }
            if let generation = cutGenerations[next], itsParents.contains(where: { parents[$0] == nil }) {
                generations[next] = generation
                stack.removeLast()
                continue
            }
            let unknown = itsParents.filter { generations[$0] == nil }
            if !unknown.isEmpty {
                stack.append(contentsOf: unknown)
                continue
            }
            let parentGenerations = itsParents.map { generations[$0] ?? nil }
            generations[next] = parentGenerations.contains(where: { $0 == nil })
                ? .some(nil) : (parentGenerations.compactMap { $0 }.max() ?? 0) + 1
            stack.removeLast()
        }
        return generations[id] ?? nil
    }

    /// Whether `id` misses parents that were pruned.
    func isCut(_ id: String) -> Bool { cutGenerations[id] != nil }

    /// Adds a revision made here (a merge), whose parents are known.
    mutating func add(_ id: String, parents itsParents: [String]) {
        parents[id] = itsParents
        generations = [:]
    }

    /// Whether `id` and all its ancestors are known.
    mutating func isComplete(_ id: String) -> Bool { generation(of: id) != nil }

    /// The complete revisions that no other complete revision follows, in id order.
    mutating func leaves() -> [String] {
        var followed = Set<String>()
        var complete: [String] = []
        for id in parents.keys where isComplete(id) {
            complete.append(id)
            followed.formUnion(parents[id] ?? [])
        }
        return complete.filter { !followed.contains($0) }.sorted()
    }

    /// `id` and every revision before it.
    func ancestry(of id: String) -> Set<String> {
        var seen: Set<String> = [id]
        var stack = [id]
        while let next = stack.popLast() {
            for parent in parents[next] ?? [] where seen.insert(parent).inserted {
                stack.append(parent)
            }
        }
        return seen
    }

    /// The candidate bases of a merge of `a` and `b`: their nearest common ancestors, longest history
    /// first, then greatest id, so that every device tries them in the same order. Empty when they
    /// share no history. (Two devices that merged the same pair differently leave two.)
    mutating func mergeBases(_ a: String, _ b: String) -> [String] {
        let common = ancestry(of: a).intersection(ancestry(of: b))
        // Every ancestor of a common ancestor is common too, so the nearest ones are those that are
        // no common ancestor's parent: one pass, however long the history.
        var dominated = Set<String>()
        for id in common {
            dominated.formUnion(parents[id] ?? [])
        }
        return common.subtracting(dominated).map { ($0, generation(of: $0) ?? 0) }
            .sorted { $0.1 != $1.1 ? $0.1 > $1.1 : $0.0 > $1.0 }
            .map(\.0)
    }

    /// The history of `memo` as stored here, with the revisions whose missing parents were pruned.
    ///
    /// A missing parent was pruned (not merely unread) when the revision's line said so (`cut`), or,
    /// once a sync has read every device (`afterReading`), when the revision came in a segment that
    /// every other device has taken in (`syncHorizon`): its whole history was read everywhere, and
    /// what is still missing of it was pruned. Before the end of the reading, such a parent may be on
    /// its way in another device's segments.
    static func load(memo: String, afterReading: Bool = true, _ db: Database) throws -> RevisionGraph {
        var parents: [String: [String]] = [:]
        var rows: [String: Row] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT id, parents, generation, cut, device, segment, localID FROM revision WHERE memo = ?
            """), arguments: [memo]) {
            let list: String = row["parents"]
            parents[row["id"]] = list.isEmpty ? [] : list.split(separator: ",").map(String.init)
            rows[row["id"]] = row
        }
        var cut: [String: Int] = [:]
        var horizons: [String: Int64]?
        for (id, itsParents) in parents where itsParents.contains(where: { parents[$0] == nil }) {
            guard let row = rows[id], let generation = row["generation"] as Int? else { continue }
            if horizons == nil { horizons = try syncHorizons(db) }
            if try row["cut"] || (afterReading && isSettled(row, horizons: horizons ?? [:], db)) { cut[id] = generation }
        }
        return RevisionGraph(parents: parents, cutGenerations: cut)
    }

    /// The leaves to fold once a sync has read every device: `graph`'s leaves, less those that pruning
    /// made look like leaves.
    ///
    /// Every other device took in the revisions that came in segments every other device took in
    /// (*settled*), and what any of them published since descends from all of them. So when a leaf
    /// from another device is not settled, every settled leaf is in truth before it, its history between
    /// them pruned; when all leaves from elsewhere are settled, the one with the longest history follows
    /// the others. Revisions made here and not settled are leaves as they are: this device may not have
    /// taken in what the others did.
    static func leavesAfterReading(_ graph: inout RevisionGraph, _ db: Database) throws -> [String] {
        let leaves = graph.leaves()
        guard leaves.count > 1 else { return leaves }
        let horizons = try syncHorizons(db)
        var settled: [(id: String, generation: Int)] = []
        var unsettled: [String] = []
        var madeHere: [String] = []
        for leaf in leaves {
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT device, segment, localID, generation FROM revision WHERE id = ?
                """), arguments: [leaf]) else { continue }
            if try isSettled(row, horizons: horizons, db) {
                settled.append((leaf, row["generation"] as Int? ?? graph.generation(of: leaf) ?? 0))
            } else if row["device"] as String? == nil {
                madeHere.append(leaf)
            } else {
                unsettled.append(leaf)
            }
        }
        let elsewhere = unsettled.isEmpty ? settled.max { ($0.generation, $0.id) < ($1.generation, $1.id) }.map { [$0.id] } ?? [] : unsettled
        return (madeHere + elsewhere).sorted()
    }

    /// How many segments of each device (this one's too) every other device has taken in.
    static func syncHorizons(_ db: Database) throws -> [String: Int64] {
        var horizons: [String: Int64] = [:]
        for row in try Row.fetchAll(db.cachedStatement(sql: "SELECT device, segments FROM syncHorizon")) {
            horizons[row["device"]] = row["segments"]
        }
        return horizons
    }

    /// Whether the revision of `row` (with `device`, `segment` and `localID`) came in a segment, read or
    /// published here, that every other device has taken in.
    private static func isSettled(_ row: Row, horizons: [String: Int64], _ db: Database) throws -> Bool {
        if let device = row["device"] as String?, let segment = row["segment"] as Int64?,
           segment <= horizons[device] ?? 0 { return true }
        guard let segment = try Int64.fetchOne(db.cachedStatement(sql: "SELECT segment FROM outgoingRevision WHERE revision = ?"),
                                               arguments: [row["localID"] as Int64]),
              let own = try String.fetchOne(db.cachedStatement(sql: "SELECT device FROM syncState")) else { return false }
        return segment <= horizons[own] ?? 0
    }
}
