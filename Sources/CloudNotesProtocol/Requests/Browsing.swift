// MARK: - memo/list

/// A page of the current list (the search filter applied), newest first.
public struct ListRequest: RequestType, Hashable {
    public static let method = "memo/list"
    public static let summary = "Returns a page of the current list, newest `modifiedAt` first, the search filter applied."
    public typealias Response = ListResult

    public static let defaultLimit = 100

    public var offset: Int?
    public var limit: Int?

    public init(offset: Int? = nil, limit: Int? = nil) {
        self.offset = offset
        self.limit = limit
    }

    public init(from decoder: any Decoder) throws {
        (offset, limit) = try Self.decodePage(from: decoder)
    }

    public static let schema = Schema.object(pageFields)
    public static let example = ListRequest(offset: 0, limit: 50)

    /// The params of a request for a page of rows: `offset` and `limit`.
    public static let pageFields: [Schema.Field] = [
        .optional("offset", .integer(minimum: 0), "Rows to skip; default 0."),
        .optional("limit", .integer(minimum: 1), "Rows to return; default 100, at most limits.maxListLimit."),
    ]

    private enum PageKeys: String, CodingKey { case offset, limit }

    /// Decodes the `pageFields` of a request's params, whole numbers or nothing.
    public static func decodePage(from decoder: any Decoder) throws -> (offset: Int?, limit: Int?) {
        let container = try decoder.container(keyedBy: PageKeys.self)
        return (try container.decodeWholeNumberIfPresent(Int.self, forKey: .offset),
                try container.decodeWholeNumberIfPresent(Int.self, forKey: .limit))
    }
}

/// A page of the list, under the filter in force, and the list's length.
public typealias ListResult = RowsPage<MemoRow>

/// A page of rows, and how many rows there are in all: the answer of `memo/list` and `trash/list`.
public struct RowsPage<Row: NamedShape>: ResponseType, Hashable {
    /// The number of rows in all: the whole (filtered) list, or the whole trash.
    public var total: Int
    public var rows: [Row]

    public init(total: Int, rows: [Row]) {
        self.total = total
        self.rows = rows
    }

    public static var schema: Schema {
        Schema.object([
            .required("total", .index, "Rows in all: the whole (filtered) list, or the whole trash."),
            .required("rows", .array(.reference(Row.shapeName))),
        ])
    }
    public static var example: Self { Self(total: 1, rows: [.example]) }
}

/// A shape the description defines once, by name, for messages to refer to.
public protocol NamedShape: Codable, Sendable, Hashable, SchemaDescribed {
    static var shapeName: String { get }
}

extension MemoRow: NamedShape {
    public static let shapeName = "MemoRow"
}

// MARK: - memo/search

/// Sets the list's filter: memos whose text contains `query`, case-insensitively. An empty query clears it.
public struct SearchRequest: RequestType, Hashable {
    public static let method = "memo/search"
    public static let summary = "Sets the list's search filter (empty clears it) and returns the first page."
    public typealias Response = SearchResult

    public var query: String
    /// The rows of the first page: a front end asks for one screen.
    public var limit: Int?

    public init(query: String, limit: Int? = nil) {
        self.query = query
        self.limit = limit
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        query = try container.decode(String.self, forKey: .query)
        limit = try container.decodeWholeNumberIfPresent(Int.self, forKey: .limit)
    }

    public static let schema = Schema.object([
        .required("query", .string(), "A substring to find, case-insensitively; empty clears the filter."),
        .optional("limit", .integer(minimum: 1), "Rows of the first page to return; default 100, at most limits.maxListLimit."),
    ])
    public static let example = SearchRequest(query: "milk", limit: 50)
}

/// The filter now in force, how many memos match it, and the first page of them.
public struct SearchResult: ResponseType, Hashable {
    public var query: String
    public var total: Int
    /// The first page of the filtered list (`memo/list` with the request's `limit`).
    public var rows: [MemoRow]
    public init(query: String, total: Int, rows: [MemoRow]) {
        self.query = query
        self.total = total
        self.rows = rows
    }
    public static let schema = Schema.object([
        .required("query", .string()),
        .required("total", .index),
        .required("rows", .array(.reference("MemoRow")), "The first page, as memo/list with offset 0 and the request's limit."),
    ])
    public static let example = SearchResult(query: "milk", total: 1, rows: [.example])
}
