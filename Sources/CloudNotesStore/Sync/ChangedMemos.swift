// MARK: - The memos a sync changed

/// A set of memos' local ids: what a sync reports as "memos changed here".
///
/// A first sync changes every memo, and it only counts them in the end, so the set must not grow
/// with the store the way the memos' ids would: as strings, and still as UUIDs in a hashed set, they
/// raised a first sync's peak memory by megabytes. Local ids are SQLite rowids, handed out in
/// sequence, so they are dense: the set keeps one 64-bit word for each run of 64 ids that holds any,
/// a 64th as many words as memos. Every memo a sync counts has a row here by then (a tombstone of a
/// memo never seen is not counted), so it has a local id.
public struct ChangedMemos: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// The bits of the ids `64 * key ..< 64 * (key + 1)`; a word is never zero.
    private var words: [Int64: UInt64] = [:]

    /// How many ids the set holds, kept as they are inserted.
    public private(set) var count = 0

    public init() {}

    public init(arrayLiteral localIDs: Int64...) {
        for localID in localIDs { insert(localID) }
    }

    public var isEmpty: Bool { count == 0 }

    /// How many words the set keeps: what it costs, 64 ids a word when they are dense.
    var wordCount: Int { words.count }

    public func contains(_ localID: Int64) -> Bool {
        let (key, bit) = Self.position(of: localID)
        return words[key, default: 0] & bit != 0
    }

    public mutating func insert(_ localID: Int64) {
        let (key, bit) = Self.position(of: localID)
        let word = words[key, default: 0]
        guard word & bit == 0 else { return }
        words[key] = word | bit
        count += 1
    }

    public mutating func formUnion(_ other: ChangedMemos) {
        for (key, bits) in other.words {
            let word = words[key, default: 0]
            count += (bits & ~word).nonzeroBitCount
            words[key] = word | bits
        }
    }

    /// The word that holds `localID` and its bit in that word (an arithmetic shift, so that a negative id,
    /// which SQLite allows, has a word of its own too).
    private static func position(of localID: Int64) -> (key: Int64, bit: UInt64) {
        (localID >> 6, 1 << UInt64(localID & 63))
    }
}
