// MARK: - The trash

/// A memo in the trash: a row of `trash/list`.
public struct TrashRow: NamedShape {
    public static let shapeName = "TrashRow"

    public var id: MemoID
    public var title: String
    public var preview: String
    /// When it was deleted.
    public var deletedAt: Timestamp
    /// `deletedAt` formatted for the client's locale and time zone.
    public var displayDate: String
    /// When it will be purged, with its versions, unless it is brought back first.
    public var purgeAt: Timestamp

    public init(id: MemoID, title: String, preview: String, deletedAt: Timestamp, displayDate: String, purgeAt: Timestamp) {
        self.id = id
        self.title = title
        self.preview = preview
        self.deletedAt = deletedAt
        self.displayDate = displayDate
        self.purgeAt = purgeAt
    }

    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("title", .string()),
        .required("preview", .string(), "The body on one line, cut to about 100 characters."),
        .required("deletedAt", .timestamp),
        .required("displayDate", .string(), "deletedAt in the client's locale and time zone."),
        .required("purgeAt", .timestamp, "When it goes for good, with its versions, unless brought back first."),
    ])
    public static let example = TrashRow(
        id: Memo.example.id, title: "Shopping", preview: "milk eggs", deletedAt: Memo.example.modifiedAt,
        displayDate: Memo.example.displayDate, purgeAt: Timestamp(milliseconds: 1_769_817_600_000))
}

// MARK: - trash/list

/// A page of the trash, most recently deleted first.
public struct TrashListRequest: RequestType, Hashable {
    public static let method = "trash/list"
    public static let summary = "Returns a page of the trash, most recently deleted first."
    public typealias Response = TrashListResult

    public var offset: Int?
    public var limit: Int?

    public init(offset: Int? = nil, limit: Int? = nil) {
        self.offset = offset
        self.limit = limit
    }

    public init(from decoder: any Decoder) throws {
        (offset, limit) = try ListRequest.decodePage(from: decoder)
    }

    public static let schema = Schema.object(ListRequest.pageFields)
    public static let example = TrashListRequest(offset: 0, limit: 50)
}

/// A page of the trash, and how many memos it holds.
public typealias TrashListResult = RowsPage<TrashRow>

// MARK: - memo/undelete

/// Brings a memo back from the trash, with its text and versions, and selects it (rule S2).
public struct UndeleteRequest: RequestType, Hashable {
    public static let method = "memo/undelete"
    public static let summary = "Brings a memo back from the trash with its text and versions, then selects and shows it; clears an active search filter."
    public typealias Response = MemoResult

    public var id: MemoID
    public init(id: MemoID) { self.id = id }

    public static let schema = Schema.object([.required("id", .memoID)])
    public static let example = UndeleteRequest(id: Memo.example.id)
}

// MARK: - trash/empty

/// Purges every memo in the trash now.
public struct TrashEmptyRequest: RequestType, ParameterlessMessage, Hashable {
    public static let method = "trash/empty"
    public static let summary = "Purges every memo in the trash, with its versions, now."
    public typealias Response = TrashEmptyResult
    public init() {}
}

/// How many memos `trash/empty` purged.
public struct TrashEmptyResult: ResponseType, Hashable {
    public var purged: Int
    public init(purged: Int) { self.purged = purged }

    public static let schema = Schema.object([.required("purged", .index, "Memos purged.")])
    public static let example = TrashEmptyResult(purged: 1)
}
