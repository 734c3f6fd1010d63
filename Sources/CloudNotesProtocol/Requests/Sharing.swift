// MARK: - memo/share

/// The formats a memo can be shared in.
public enum ShareFormat: String, Codable, Sendable, CaseIterable {
    case text, markdown, json
}

/// Renders a memo for sharing: what a share sheet would hand to another app.
public struct ShareRequest: RequestType, Hashable {
    public static let method = "memo/share"
    public static let summary = "Renders a memo as plain text, Markdown or JSON, with a file name and MIME type."
    public typealias Response = ShareResult

    public var id: MemoID
    public var format: ShareFormat?

    public init(id: MemoID, format: ShareFormat? = nil) {
        self.id = id
        self.format = format
    }

    public static let schema = Schema.object([
        .required("id", .memoID),
        .optional("format", .enumeration(ShareFormat.allCases.map(\.rawValue)), "Default text."),
    ])
    public static let example = ShareRequest(id: Memo.example.id, format: .markdown)
}

/// A memo rendered as a share sheet would hand it to another app: its text, its type and a file name.
public struct ShareResult: ResponseType, Hashable {
    public var title: String
    public var text: String
    public var mimeType: String
    /// A safe file name (no path separators) with the format's extension.
    public var filename: String

    public init(title: String, text: String, mimeType: String, filename: String) {
        self.title = title
        self.text = text
        self.mimeType = mimeType
        self.filename = filename
    }

    public static let schema = Schema.object([
        .required("title", .string()),
        .required("text", .string(), "The rendered memo."),
        .required("mimeType", .string()),
        .required("filename", .string(), "A file name without path separators."),
    ])
    public static let example = ShareResult(
        title: "Shopping", text: "# Shopping\n\nmilk\neggs", mimeType: "text/markdown", filename: "Shopping.md")
}
