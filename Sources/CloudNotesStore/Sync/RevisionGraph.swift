// MARK: - Revision graph

/// The history of one memo: which revision follows which. Answers the questions a merge asks
/// (is one an ancestor of the other, which common ancestor is the base) from the history alone.
struct RevisionGraph {
    /// Parents by revision id, for every known revision of the memo.
    private let parents: [String: [String]]
    private var generations: [String: Int?] = [:]

    init(parents: [String: [String]]) {
        self.parents = parents
    }

    /// The length of the longest path from a root to `id`, or nil when an ancestor is missing (a
    /// revision whose parents were published on a device this one has not read yet).
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
}
