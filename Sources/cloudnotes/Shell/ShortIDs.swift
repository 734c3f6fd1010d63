import CloudNotesStore

// MARK: - Short ids

/// The ids `list` and `search` print: each memo's shortest prefix that no other live memo shares, at
/// least `minimumLength` characters, as git abbreviates commits.
///
/// Memos made in one moment (an import's chunk) share the first characters of their ids, so a fixed
/// length is not enough: each prefix is one character longer than the longest it shares with its
/// neighbours in id order. Every command takes such a prefix back (`memoID(matching:)`).
struct ShortIDs {
    static let minimumLength = 8

    /// Every live memo's id (or every id of the set asked for), in order.
    private let sorted: [String]

    /// Among the live memos, or the memos of `set`.
    init(store: MemoStore, among set: MemoStore.MemoSet = .live) throws {
        sorted = try store.memoIDs(startingWith: "", limit: .max, among: set)
    }

    /// The shortest unique prefix of `id`, at least `minimumLength` characters, never ending at a dash.
    func shortID(_ id: String) -> String {
        let utf8 = Array(id.utf8)
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < id { low = middle + 1 } else { high = middle }
        }
        var length = Self.minimumLength
        for neighbour in [low - 1, low, low + 1] where sorted.indices.contains(neighbour) && sorted[neighbour] != id {
            length = max(length, Self.sharedLength(utf8, Array(sorted[neighbour].utf8)) + 1)
        }
        length = min(length, utf8.count)
        if length < utf8.count, utf8[length - 1] == UInt8(ascii: "-") { length += 1 }
        return String(decoding: utf8.prefix(length), as: UTF8.self)
    }

    private static func sharedLength(_ left: [UInt8], _ right: [UInt8]) -> Int {
        zip(left, right).prefix { $0 == $1 }.count
    }
}
