import Foundation

// MARK: - The memos a sync changed

/// A set of memo ids, kept as 16-byte UUIDs: what a sync reports as "memos changed here".
///
/// A first sync changes every memo, and it only counts them in the end: as strings (an allocation of
/// some 80 bytes each), the ids of 100,000 memos took a pull's peak RSS from 45 to 57 MB, the only part
/// of it that grew with the number of memos. An id that is not a UUID (none the store makes, but a
/// remote holds what others wrote) is kept as it is.
public struct ChangedMemos: Sendable, Hashable, ExpressibleByArrayLiteral {
    private var uuids = Set<UUID>()
    private var others = Set<String>()

    public init() {}

    public init(arrayLiteral ids: String...) {
        for id in ids { insert(id) }
    }

    public var count: Int { uuids.count + others.count }
    public var isEmpty: Bool { count == 0 }

    public func contains(_ id: String) -> Bool {
        UUID(uuidString: id).map { uuids.contains($0) } ?? others.contains(id)
    }

    public mutating func insert(_ id: String) {
        if let uuid = UUID(uuidString: id) { uuids.insert(uuid) } else { others.insert(id) }
    }

    public mutating func formUnion(_ other: ChangedMemos) {
        uuids.formUnion(other.uuids)
        others.formUnion(other.others)
    }
}
