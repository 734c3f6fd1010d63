// MARK: - Results

/// The memo a request acted on, as the store now holds it.
public struct MemoResult: ResponseType, Hashable {
    public var memo: Memo
    public init(memo: Memo) { self.memo = memo }
    public static let schema = Schema.object([.required("memo", .reference("Memo"))])
    public static let example = MemoResult(memo: .example)
}

// MARK: - memo/create

/// Creates a memo at the top of the list and selects it.
public struct CreateRequest: RequestType, Hashable {
    public static let method = "memo/create"
    public static let summary = "Creates a memo at index 0, selects it and shows it; clears an active search filter."
    public typealias Response = MemoResult

    public var text: String?
    public init(text: String? = nil) { self.text = text }

    public static let schema = Schema.object([.optional("text", .string(), "The initial text; default empty.")])
    public static let example = CreateRequest(text: "Shopping\nmilk\neggs")
}

// MARK: - memo/select

/// Selects a memo and shows it in the detail pane.
public struct SelectRequest: RequestType, Hashable {
    public static let method = "memo/select"
    public static let summary = "Selects a memo and shows it in the detail pane."
    public typealias Response = MemoResult

    public var id: MemoID
    public init(id: MemoID) { self.id = id }

    public static let schema = Schema.object([.required("id", .memoID)])
    public static let example = SelectRequest(id: Memo.example.id)
}

// MARK: - memo/update

/// Replaces a memo's text; with `baseVersion`, only if nobody changed it since.
public struct UpdateRequest: RequestType, Hashable {
    public static let method = "memo/update"
    public static let summary = "Replaces a memo's text and moves it to index 0; refused with a conflict when `baseVersion` is stale."
    public typealias Response = MemoResult

    public var id: MemoID
    public var text: String
    /// The version the client's text was based on.
    public var baseVersion: Int64?

    public init(id: MemoID, text: String, baseVersion: Int64? = nil) {
        self.id = id
        self.text = text
        self.baseVersion = baseVersion
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(MemoID.self, forKey: .id)
        text = try container.decode(String.self, forKey: .text)
        baseVersion = try container.decodeWholeNumberIfPresent(Int64.self, forKey: .baseVersion, minimum: 1)
    }

    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("text", .string(), "The new full text."),
        .optional("baseVersion", .integer(minimum: 1), "The version this text was based on; a different current version is a conflict."),
    ])
    public static let example = UpdateRequest(id: Memo.example.id, text: "Shopping\nmilk\neggs\nbread", baseVersion: 1)
}

// MARK: - memo/edit

/// Applies an editor's changes to a memo: what a keystroke sends, instead of the whole text.
public struct EditRequest: RequestType, Hashable {
    public static let method = "memo/edit"
    public static let summary = "Applies changes (UTF-8 byte ranges) to the text of a memo at `baseVersion` and moves it to index 0; answers with the new version, not the text."
    public typealias Response = EditResult

    public var id: MemoID
    /// The version the edits were made against: edits to any other text would land in the wrong place.
    public var baseVersion: Int64
    /// Applied in order, each to the text the ones before it left.
    public var edits: [TextEdit]

    public init(id: MemoID, baseVersion: Int64, edits: [TextEdit]) {
        self.id = id
        self.baseVersion = baseVersion
        self.edits = edits
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(MemoID.self, forKey: .id)
        baseVersion = try container.decodeWholeNumber(Int64.self, forKey: .baseVersion, minimum: 1)
        edits = try container.decode([TextEdit].self, forKey: .edits)
    }

    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("baseVersion", .integer(minimum: 1), "The version the edits were made against; a different current version is a conflict."),
        .required("edits", .array(.reference("TextEdit")), "Applied in order, each to the text the ones before it left; at most 1000, may be empty."),
    ])
    public static let example = EditRequest(id: Memo.example.id, baseVersion: 1, edits: [.example])
}

/// What changed about a memo an edit was applied to; the client has the text already.
public struct EditResult: ResponseType, Hashable {
    public var id: MemoID
    /// The `baseVersion` of the next edit.
    public var version: Int64
    public var title: String
    public var modifiedAt: Timestamp
    public var displayDate: String
    /// The text's length in UTF-8 bytes, for a client to check its copy against.
    public var length: Int

    public init(id: MemoID, version: Int64, title: String, modifiedAt: Timestamp, displayDate: String, length: Int) {
        self.id = id
        self.version = version
        self.title = title
        self.modifiedAt = modifiedAt
        self.displayDate = displayDate
        self.length = length
    }

    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("version", .integer(minimum: 1), "The version after the edits: the `baseVersion` of the next ones."),
        .required("title", .string(), "First non-blank line, trimmed, or a localized placeholder."),
        .required("modifiedAt", .timestamp),
        .required("displayDate", .string(), "modifiedAt in the client's locale and time zone."),
        .required("length", .integer(minimum: 0), "The new text's length in UTF-8 bytes."),
    ])
    public static let example = EditResult(
        id: Memo.example.id, version: 2, title: "Shopping", modifiedAt: Memo.example.modifiedAt,
        displayDate: Memo.example.displayDate, length: 24)
}

// MARK: - memo/delete

/// Deletes a memo (leaving a tombstone) and moves the selection as the split view does.
public struct DeleteRequest: RequestType, Hashable {
    public static let method = "memo/delete"
    public static let summary = "Deletes a memo; a deleted selection moves to the memo now at the same index, or the one above."
    public typealias Response = DeleteResult

    public var id: MemoID
    public init(id: MemoID) { self.id = id }

    public static let schema = Schema.object([.required("id", .memoID)])
    public static let example = DeleteRequest(id: Memo.example.id)
}

/// The answer of `memo/delete`: what the detail pane shows now.
public struct DeleteResult: ResponseType, Hashable {
    /// The memo selected after the delete, or nil when nothing is.
    public var selected: Memo?
    public init(selected: Memo?) { self.selected = selected }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(selected, forKey: .selected)  // null, not absent, when nothing is selected
    }

    public static let schema = Schema.object([.required("selected", .nullable(.reference("Memo")))])
    public static let example = DeleteResult(selected: nil)
}
