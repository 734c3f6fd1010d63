// MARK: - List order in memory

/// Visible memos in list order, kept in memory so that a position, a page or a move costs no scan.
///
/// Entries are stored oldest first, so the list's top (index 0) is the array's end: a new or edited
/// memo is appended, and the memo being typed in, already at the end, moves in constant time.
struct ListOrder: Sendable {
    /// One memo's place: its sort key and its local id.
    struct Entry: Sendable, Comparable, Hashable {
        var key: ListOrderKey
        var localID: Int64
        static func < (lhs: Entry, rhs: Entry) -> Bool { lhs.key < rhs.key }
    }

    private(set) var entries: [Entry]

    init(ascending entries: [Entry]) {
        self.entries = entries
    }

    var count: Int { entries.count }

    /// The list index (0 = newest) of the memo with `key`, or nil when it is not in the list.
    func index(of key: ListOrderKey) -> Int? {
        let position = insertionPoint(of: key)
        guard position < entries.count, entries[position].key == key else { return nil }
        return entries.count - 1 - position
    }

    /// Whether `entry` (its key and its memo) is in the list.
    func contains(_ entry: Entry) -> Bool {
        let position = insertionPoint(of: entry.key)
        return position < entries.count && entries[position] == entry
    }

    /// The local ids of the rows at list indices `offset..<offset+limit`, newest first.
    func page(offset: Int, limit: Int) -> [Int64] {
        guard offset < entries.count, limit > 0 else { return [] }
        let upper = entries.count - offset
        let lower = max(0, upper - limit)
        return entries[lower..<upper].reversed().map(\.localID)
    }

    mutating func insert(_ entry: Entry) {
        if let last = entries.last, last.key < entry.key {
            entries.append(entry)
        } else {
            entries.insert(entry, at: insertionPoint(of: entry.key))
        }
    }

    mutating func remove(_ key: ListOrderKey) {
        let position = insertionPoint(of: key)
        if position < entries.count, entries[position].key == key { entries.remove(at: position) }
    }

    /// Takes out every entry of the memos in `changed` and puts in `entries` (where those memos now
    /// stand, for the ones still in the list), in one pass over the list: moving each alone costs a
    /// pass over the list per memo.
    mutating func replace(_ changed: LocalIDSet, with entries: [Entry]) {
        let kept = self.entries.filter { !changed.contains($0.localID) }
        let added = entries.sorted()
        var merged: [Entry] = []
        merged.reserveCapacity(kept.count + added.count)
        var (old, new) = (kept.startIndex, added.startIndex)
        while old < kept.endIndex, new < added.endIndex {
            if added[new] < kept[old] {
                merged.append(added[new])
                new += 1
            } else {
                merged.append(kept[old])
                old += 1
            }
        }
        merged += kept[old...]
        merged += added[new...]
        self.entries = merged
    }

    /// The first position whose key is not below `key` (binary search).
    private func insertionPoint(of key: ListOrderKey) -> Int {
        if let last = entries.last, last.key == key { return entries.count - 1 }
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].key < key { low = middle + 1 } else { high = middle }
        }
        return low
    }
}

extension ListOrderKey: Comparable {
    public static func < (lhs: ListOrderKey, rhs: ListOrderKey) -> Bool {
        (lhs.modifiedAt, lhs.seq) < (rhs.modifiedAt, rhs.seq)
    }
}
