// MARK: - Versions

/// Where a version's text came from: an editor's session, the shell, an import, another device (through
/// sync), a merge, a restore, or `unknown` (written before versions were kept).
public enum VersionOrigin: String, Codable, Sendable, CaseIterable {
    case edit, shell, `import`, device, merge, restore, assistant, unknown
}

/// One kept version of a memo, without its text: a row of `memo/history`.
public struct VersionRow: Codable, Sendable, Hashable, SchemaDescribed {
    /// The version's number: counted per memo from 1, never reused.
    public var version: Int64
    /// When this text was written.
    public var modifiedAt: Timestamp
    public var displayDate: String
    public var origin: VersionOrigin
    /// The device that wrote it, for `origin` `device`.
    public var device: String?
    /// The memo's title with this text.
    public var title: String
    /// The text's length in UTF-8 bytes.
    public var size: Int

    public init(version: Int64, modifiedAt: Timestamp, displayDate: String, origin: VersionOrigin, device: String?,
                title: String, size: Int) {
        self.version = version
        self.modifiedAt = modifiedAt
        self.displayDate = displayDate
        self.origin = origin
        self.device = device
        self.title = title
        self.size = size
    }

    public static let schemaFields: [Schema.Field] = [
        .required("version", .integer(minimum: 1), "Counted per memo from 1; never reused."),
        .required("modifiedAt", .timestamp, "When this text was written."),
        .required("displayDate", .string(), "modifiedAt in the client's locale and time zone."),
        .required("origin", .enumeration(VersionOrigin.allCases.map(\.rawValue)), "Who wrote this text."),
        .optional("device", .string(), "The device that wrote it, for origin `device`."),
        .required("title", .string(), "The memo's title with this text."),
        .required("size", .index, "The text's length in UTF-8 bytes."),
    ]
    public static let schema = Schema.object(schemaFields)
    public static let example = VersionRow(
        version: 1, modifiedAt: Memo.example.modifiedAt, displayDate: Memo.example.displayDate, origin: .edit, device: nil,
        title: "Shopping", size: 18)
}

// MARK: - memo/history

/// Lists the versions a memo keeps, newest first.
public struct HistoryRequest: RequestType, Hashable {
    public static let method = "memo/history"
    public static let summary = "Returns a page of a memo's kept versions (live or in the trash), newest first; the current text is not one of them."
    public typealias Response = HistoryResult

    public var id: MemoID
    public var offset: Int?
    public var limit: Int?

    public init(id: MemoID, offset: Int? = nil, limit: Int? = nil) {
        self.id = id
        self.offset = offset
        self.limit = limit
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(MemoID.self, forKey: .id)
        (offset, limit) = try ListRequest.decodePage(from: decoder)
    }

    public static let schema = Schema.object([.required("id", .memoID)] + ListRequest.pageFields)
    public static let example = HistoryRequest(id: Memo.example.id, limit: 20)
}

/// A page of a memo's versions, and how many it keeps.
public struct HistoryResult: ResponseType, Hashable {
    public var id: MemoID
    public var total: Int
    public var versions: [VersionRow]

    public init(id: MemoID, total: Int, versions: [VersionRow]) {
        self.id = id
        self.total = total
        self.versions = versions
    }

    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("total", .index, "Versions the memo keeps."),
        .required("versions", .array(.reference("VersionRow")), "Newest first."),
    ])
    public static let example = HistoryResult(id: Memo.example.id, total: 1, versions: [.example])
}

// MARK: - memo/version

/// Returns one kept version of a memo, with its text.
public struct VersionRequest: RequestType, Hashable {
    public static let method = "memo/version"
    public static let summary = "Returns one kept version of a memo with its text."
    public typealias Response = VersionResult

    public var id: MemoID
    public var version: Int64

    public init(id: MemoID, version: Int64) {
        self.id = id
        self.version = version
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(MemoID.self, forKey: .id)
        version = try container.decodeWholeNumber(Int64.self, forKey: .version, minimum: 1)
    }

    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("version", .integer(minimum: 1), "A version number from memo/history."),
    ])
    public static let example = VersionRequest(id: Memo.example.id, version: 1)
}

/// One version with its text: the members of its `VersionRow`, with `id` and `text`.
public struct VersionResult: ResponseType, Hashable {
    public var id: MemoID
    public var row: VersionRow
    public var text: String

    public init(id: MemoID, row: VersionRow, text: String) {
        self.id = id
        self.row = row
        self.text = text
    }

    private enum CodingKeys: String, CodingKey { case id, text }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(MemoID.self, forKey: .id)
        text = try container.decode(String.self, forKey: .text)
        row = try VersionRow(from: decoder)
    }

    /// One object: the row's members with `id` and `text` (an encoder takes one container per value).
    public func encode(to encoder: any Encoder) throws {
        guard case .object(var members) = JSONValue(encoding: row) else { return }
        members["id"] = .string(id.description)
        members["text"] = .string(text)
        try JSONValue.object(members).encode(to: encoder)
    }

    public static let schema = Schema.object(
        [.required("id", .memoID)] + VersionRow.schemaFields + [.required("text", .string(), "The version's text, exactly.")])
    public static let example = VersionResult(id: Memo.example.id, row: .example, text: "Shopping\nmilk\neggs")
}

// MARK: - memo/restore

/// Makes a kept version's text the memo's current text, as a change (rule S3).
public struct RestoreRequest: RequestType, Hashable {
    public static let method = "memo/restore"
    public static let summary = "Makes a kept version's text the memo's current text, as a change that itself keeps the text it replaces; moves it to index 0."
    public typealias Response = MemoResult

    public var id: MemoID
    public var version: Int64
    /// The memo's version the client last saw; a different current version is a conflict.
    public var baseVersion: Int64?

    public init(id: MemoID, version: Int64, baseVersion: Int64? = nil) {
        self.id = id
        self.version = version
        self.baseVersion = baseVersion
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(MemoID.self, forKey: .id)
        version = try container.decodeWholeNumber(Int64.self, forKey: .version, minimum: 1)
        baseVersion = try container.decodeWholeNumberIfPresent(Int64.self, forKey: .baseVersion, minimum: 1)
    }

    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("version", .integer(minimum: 1), "The version to restore, from memo/history."),
        .optional("baseVersion", .integer(minimum: 1), "The memo's version the client last saw; a different current version is a conflict."),
    ])
    public static let example = RestoreRequest(id: Memo.example.id, version: 1, baseVersion: 2)
}
