// MARK: - A set of local ids

/// A set of memos' local ids, for testing every entry of the list order against a search's matches.
///
/// Local ids are SQLite rowids, handed out in sequence, so they are small and dense: a bitmap answers
/// `contains` with a shift and a mask, where a hashed `Set` spends a hash per test (which was most of
/// a new search's time at 100,000 memos). Ids too large for a bitmap of at most 1 MB use a `Set`.
struct LocalIDSet: Sendable {
    private enum Storage: Sendable {
        case bitmap([UInt64])
        case hashed(Set<Int64>)
    }

    /// The largest id a bitmap holds: 8 Mi bits, 1 MB.
    static let bitmapLimit: Int64 = 8 * 1024 * 1024 - 1

    private let storage: Storage

    init(_ ids: [Int64]) {
        let largest = ids.max() ?? 0
        let smallest = ids.min() ?? 0
        guard smallest >= 0, largest <= Self.bitmapLimit else {
            storage = .hashed(Set(ids))
            return
        }
        var words = [UInt64](repeating: 0, count: Int(largest >> 6) + 1)
        for id in ids { words[Int(id >> 6)] |= 1 << UInt64(id & 63) }
        storage = .bitmap(words)
    }

    /// The elements of `elements` whose `id` the set holds, in order, with room made for `expected` of them.
    ///
    /// One look at the storage for all of them: a new search for a common term tests a whole list
    /// order, and a call of `contains` for each entry was a visible part of it.
    func filter<Element>(_ elements: [Element], expected: Int, id: (Element) -> Int64) -> [Element] {
        var kept: [Element] = []
        kept.reserveCapacity(expected)
        switch storage {
        case .bitmap(let words):
            words.withUnsafeBufferPointer { words in
                for element in elements where Self.bitmap(words, holds: id(element)) { kept.append(element) }
            }
        case .hashed(let set):
            for element in elements where set.contains(id(element)) { kept.append(element) }
        }
        return kept
    }

    func contains(_ id: Int64) -> Bool {
        switch storage {
        case .bitmap(let words):
            return words.withUnsafeBufferPointer { Self.bitmap($0, holds: id) }
        case .hashed(let set):
            return set.contains(id)
        }
    }

    /// Whether the bit of `id` is set in `words`.
    private static func bitmap(_ words: UnsafeBufferPointer<UInt64>, holds id: Int64) -> Bool {
        guard id >= 0 else { return false }
        let index = Int(id >> 6)
        return index < words.count && words[index] & (1 << UInt64(id & 63)) != 0
    }
}
