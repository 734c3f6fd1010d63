import Foundation
import GRDB

// MARK: - Stored memo

/// A memo as the store keeps it: the exact text, what is derived from it, and its change history markers.
public struct StoredMemo: Codable, Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
    public static let databaseTableName = "memo"

    /// The row's local integer key (the full-text index refers to it); never leaves the store.
    public var localID: Int64?
    /// A UUID in lower case.
    public var id: String
    public var text: String
    public var title: String
    public var preview: String
    /// Milliseconds since the Unix epoch.
    public var createdAt: Int64
    public var modifiedAt: Int64
    /// 1 when created, one more with every change.
    public var version: Int64
    /// The store-wide sequence number of the memo's latest change.
    public var seq: Int64
    /// A tombstone: hidden from every list, kept for sync.
    public var deleted: Bool

    public var body: String { MemoText(text).body }

    /// What the list shows of this memo.
    public var listed: ListedMemo {
        ListedMemo(id: id, title: title, preview: preview, modifiedAt: modifiedAt, seq: seq)
    }

    /// The key the list is sorted by, newest first.
    public var orderKey: ListOrderKey { ListOrderKey(modifiedAt: modifiedAt, seq: seq) }

    public enum Columns {
        static let localID = Column(CodingKeys.localID)
        static let id = Column(CodingKeys.id)
        static let text = Column(CodingKeys.text)
        static let modifiedAt = Column(CodingKeys.modifiedAt)
        static let seq = Column(CodingKeys.seq)
        static let deleted = Column(CodingKeys.deleted)
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        localID = inserted.rowID
    }

    /// Sets the text and everything derived from it.
    mutating func setText(_ newText: String) {
        text = newText
        let derived = MemoText(newText)
        title = derived.title
        preview = derived.preview
    }

    init(id: String, text: String, createdAt: Int64, modifiedAt: Int64, seq: Int64) {
        self.id = id
        self.text = ""
        self.title = ""
        self.preview = ""
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.version = 1
        self.seq = seq
        self.deleted = false
        setText(text)
    }
}

// MARK: - List rows

/// What the list shows of a memo, without its (possibly long) text.
public struct ListedMemo: Sendable, Hashable, FetchableRecord, Decodable {
    public var id: String
    public var title: String
    public var preview: String
    public var modifiedAt: Int64
    public var seq: Int64

    public var orderKey: ListOrderKey { ListOrderKey(modifiedAt: modifiedAt, seq: seq) }
}

/// The list's sort key: newest `modifiedAt` first, then the latest change first.
///
/// `seq` is unique, so the order is total and never changes between two reads of the same state,
/// also for imported memos that share one timestamp.
public struct ListOrderKey: Sendable, Hashable {
    public var modifiedAt: Int64
    public var seq: Int64
}
