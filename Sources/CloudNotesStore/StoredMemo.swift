import Foundation
import GRDB

// MARK: - Stored memo

/// A memo as the store keeps it: the exact text, what is derived from it, and its change history markers.
public struct StoredMemo: Sendable, Hashable, FetchableRecord, MutablePersistableRecord {
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
    /// Whether an import is still adding this memo (column `importBatch` set); hidden until it finishes.
    public var importing: Bool
    /// Whether the text is in the full-text index (else a search reads it directly).
    public var indexed: Bool
    /// Who wrote the current text (`Author.stored`); nil when unknown (written before versions existed).
    public var author: String?
    /// When a deleted memo went to the trash; nil for a live memo and for one whose text is gone.
    public var trashedAt: Int64?

    /// What the list shows of this memo.
    public var listed: ListedMemo {
        ListedMemo(localID: localID ?? 0, id: id, title: title, preview: preview, modifiedAt: modifiedAt, seq: seq)
    }

    /// The key the list is sorted by, newest first.
    public var orderKey: ListOrderKey { ListOrderKey(modifiedAt: modifiedAt, seq: seq) }

    // MARK: Rows

    public init(row: Row) throws {
        localID = row["localID"]
        id = row["id"]
        seq = row["seq"]
        // The text is stored as UTF-8 bytes (a BLOB): SQLite's text binding would cut it at a NUL character.
        text = String(storedUTF8: row["text"] as Data)
        title = row["title"]
        preview = row["preview"]
        createdAt = row["createdAt"]
        modifiedAt = row["modifiedAt"]
        version = row["version"]
        deleted = row["deleted"]
        importing = !(row["importBatch"] as DatabaseValue).isNull
        indexed = row["indexed"]
        author = row["author"]
        trashedAt = row["trashedAt"]
    }

    /// The columns `init(row:reusing:)` reads from a stepped statement, in order.
    static let steppedColumns = "localID, id, seq, text, title, preview, createdAt, modifiedAt, version, deleted, importBatch, indexed, author, trashedAt"

    /// Reads a row of `steppedColumns`; its text is `recent`'s when that is the text of this row at its `seq`.
    init(row: SteppedRow, reusing recent: RecentText?) {
        localID = row.int64(0)
        id = row.string(1)
        seq = row.int64(2)
        if let recent, recent.localID == localID, recent.seq == seq {
            text = recent.text
        } else {
            text = row.string(3)
        }
        title = row.string(4)
        preview = row.string(5)
        createdAt = row.int64(6)
        modifiedAt = row.int64(7)
        version = row.int64(8)
        deleted = row.bool(9)
        importing = !row.isNull(10)
        indexed = row.bool(11)
        author = row.isNull(12) ? nil : row.string(12)
        trashedAt = row.isNull(13) ? nil : row.int64(13)
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["localID"] = localID
        container["id"] = id
        container["text"] = Data(text.utf8)
        container["title"] = title
        container["preview"] = preview
        container["createdAt"] = createdAt
        container["modifiedAt"] = modifiedAt
        container["version"] = version
        container["seq"] = seq
        container["deleted"] = deleted
        // An import marks its memos in SQL (an empty BLOB, which a bound argument cannot be); a memo
        // written here is never one of them, and a mark of any value would keep one hidden.
        container["importBatch"] = importing ? "import" : nil
        container["indexed"] = indexed
        container["author"] = author
        container["trashedAt"] = trashedAt
    }

    /// Writes what an edit or a delete changes (everything but the id, the creation time and the import):
    /// one cached statement, where a record update would build and look up its SQL on every keystroke.
    func saveChange(_ db: Database) throws {
        let localID = try storedLocalID
        try db.cachedStatement(sql: """
            UPDATE memo SET text = ?, title = ?, preview = ?, modifiedAt = ?, version = ?, seq = ?, deleted = ?, indexed = ?,
                author = ?, trashedAt = ?
            WHERE localID = ?
            """).execute(arguments: [Data(text.utf8), title, preview, modifiedAt, version, seq, deleted, indexed,
                                     author, trashedAt, localID])
    }

    /// The local id of a memo read from the store or inserted into it; one never stored has none.
    var storedLocalID: Int64 {
        get throws(StoreError) {
            guard let localID else { throw .memoNotFound(id: id) }
            return localID
        }
    }

    public mutating func didInsert(_ inserted: InsertionSuccess) {
        localID = inserted.rowID
    }

    /// Texts up to this many bytes are indexed in the transaction that writes them; longer ones later,
    /// in the background, once the client is quiet. Zero: every edit is indexed later, so a keystroke
    /// never pays for the index (and a burst of keystrokes never rewrites it), while searches read the
    /// few unindexed memos directly.
    static let inlineIndexLimit = 0

    /// Sets the text and everything derived from it.
    mutating func setText(_ newText: String) {
        text = newText
        // The index would end a text at a NUL: such a text stays out (see `MemoStore.indexPendingMemos`).
        indexed = newText.utf8.count <= Self.inlineIndexLimit && !newText.holdsNUL
        (title, preview) = Self.listColumns(of: newText)
    }

    /// The title and preview the list shows of `text`.
    static func listColumns(of text: String) -> (title: String, preview: String) {
        let derived = MemoText(text)
        // Derived columns are SQLite text, which ends at a NUL: leave NULs out of them. The list shows
        // at most `MemoText.listTitleLength` characters of a title, so a one-line megabyte memo makes a
        // short row.
        return (derived.listTitle.withoutNULs, derived.preview.withoutNULs)
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
        self.importing = false
        self.indexed = false
        self.author = nil
        self.trashedAt = nil
        setText(text)
    }
}

extension String {
    /// The string without its NUL characters (itself, uncopied, when it has none: nearly always).
    var withoutNULs: String {
        holdsNUL ? String(decoding: utf8.filter { $0 != 0 }, as: UTF8.self) : self
    }

    /// Whether the string holds a NUL character: one `memchr` over its UTF-8 (a check under a search
    /// filter reads a long memo's whole text at each keystroke).
    var holdsNUL: Bool {
        var text = self
        return text.withUTF8 { bytes in bytes.count > 0 && memchr(bytes.baseAddress!, 0, bytes.count) != nil }
    }

    /// Whether both strings hold the same bytes: one `memcmp`, where `==` compares Unicode-canonically,
    /// character by character, in any text that is not ASCII (and a memo's exact bytes are what count).
    func hasSameBytes(as other: String) -> Bool {
        var this = self
        var other = other
        return this.withUTF8 { mine in
            other.withUTF8 { theirs in
                mine.count == theirs.count && (mine.count == 0 || memcmp(mine.baseAddress!, theirs.baseAddress!, mine.count) == 0)
            }
        }
    }
}

// MARK: - List rows

/// What the list shows of a memo, without its (possibly long) text.
public struct ListedMemo: Sendable, Hashable {
    var localID: Int64
    public var id: String
    public var title: String
    public var preview: String
    public var modifiedAt: Int64
    public var seq: Int64

    init(localID: Int64, id: String, title: String, preview: String, modifiedAt: Int64, seq: Int64) {
        self.localID = localID
        self.id = id
        self.title = title
        self.preview = preview
        self.modifiedAt = modifiedAt
        self.seq = seq
    }

    /// Reads a row of `localID, id, title, preview, modifiedAt, seq`, in that order.
    init(row: SteppedRow) {
        self.init(localID: row.int64(0), id: row.string(1), title: row.string(2), preview: row.string(3),
                  modifiedAt: row.int64(4), seq: row.int64(5))
    }

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
