// MARK: - Memo

/// A whole memo, as the detail pane shows it.
public struct Memo: Codable, Sendable, Hashable, SchemaDescribed {
    public var id: MemoID
    /// The text exactly as the client sent it, byte for byte.
    public var text: String
    /// The first line with non-blank characters, trimmed; a localized placeholder when there is none.
    public var title: String
    /// Everything after the title line.
    public var body: String
    public var createdAt: Timestamp
    public var modifiedAt: Timestamp
    /// Grows with every change; the `baseVersion` of `memo/update`.
    public var version: Int64
    /// `modifiedAt` formatted for the client's locale and time zone.
    public var displayDate: String

    public init(
        id: MemoID, text: String, title: String, body: String, createdAt: Timestamp, modifiedAt: Timestamp,
        version: Int64, displayDate: String
    ) {
        self.id = id
        self.text = text
        self.title = title
        self.body = body
        self.createdAt = createdAt
        self.modifiedAt = modifiedAt
        self.version = version
        self.displayDate = displayDate
    }
}

// MARK: - Row

/// One row of the memo list.
public struct MemoRow: Codable, Sendable, Hashable, SchemaDescribed {
    public var id: MemoID
    public var title: String
    /// The body on one line, cut to about 100 characters.
    public var preview: String
    public var modifiedAt: Timestamp
    public var displayDate: String

    public init(id: MemoID, title: String, preview: String, modifiedAt: Timestamp, displayDate: String) {
        self.id = id
        self.title = title
        self.preview = preview
        self.modifiedAt = modifiedAt
        self.displayDate = displayDate
    }
}
