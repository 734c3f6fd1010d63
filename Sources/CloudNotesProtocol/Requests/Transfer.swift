// MARK: - memo/import

/// Imports memos in the original app's format, from a file or inline; each entry becomes a new memo.
public struct ImportRequest: RequestType, Hashable {
    public static let method = "memo/import"
    public static let summary = "Imports memos in the original app's JSON format from `path` or inline `memos`; all or nothing."
    public typealias Response = ImportResult

    /// A file holding a JSON array of entries, taken literally (no `~`, no variables).
    public var path: String?
    /// The entries themselves; a bad entry is reported by its index.
    public var memos: [ImportEntry]?
    public var workDoneToken: ProgressToken?

    public init(path: String? = nil, memos: [ImportEntry]? = nil, workDoneToken: ProgressToken? = nil) {
        self.path = path
        self.memos = memos
        self.workDoneToken = workDoneToken
    }

    public static let schema = Schema.object([
        .optional("path", .string(), "A JSON file; exactly one of path and memos."),
        .optional("memos", .array(.reference("ImportEntry")), "The entries inline."),
        .optional("workDoneToken", .progressToken, "Reports $/progress under this token."),
    ])
    public static let example = ImportRequest(memos: [ImportEntry.example])
}

/// The answer of `memo/import`, sent once every memo it created is committed and in the list.
public struct ImportResult: ResponseType, Hashable {
    /// How many memos were created.
    public var imported: Int
    public init(imported: Int) { self.imported = imported }
    public static let schema = Schema.object([.required("imported", .index)])
    public static let example = ImportResult(imported: 1)
}

// MARK: - memo/export

/// The formats the whole store can be exported in.
public enum ExportFormat: String, Codable, Sendable, CaseIterable {
    /// One JSON file in the import format, plus `id` and the exact `text`.
    case json
    /// A new folder with one Markdown file per memo.
    case markdown
}

/// Writes every memo to a file or folder; never overwrites one unless `overwrite` is true.
public struct ExportRequest: RequestType, Hashable {
    public static let method = "memo/export"
    public static let summary = "Writes every memo as one JSON file or a folder of Markdown files."
    public typealias Response = ExportResult

    public var path: String
    public var format: ExportFormat
    public var overwrite: Bool?
    public var workDoneToken: ProgressToken?

    public init(path: String, format: ExportFormat, overwrite: Bool? = nil, workDoneToken: ProgressToken? = nil) {
        self.path = path
        self.format = format
        self.overwrite = overwrite
        self.workDoneToken = workDoneToken
    }

    public static let schema = Schema.object([
        .required("path", .string(), "Taken literally; must not exist unless overwrite is true."),
        .required("format", .enumeration(ExportFormat.allCases.map(\.rawValue))),
        .optional("overwrite", .boolean, "Replace an existing file or folder; default false."),
        .optional("workDoneToken", .progressToken),
    ])
    public static let example = ExportRequest(path: "/tmp/memos.json", format: .json)
}

/// The answer of `memo/export`: how many memos were written, and where.
public struct ExportResult: ResponseType, Hashable {
    public var exported: Int
    /// The absolute path written.
    public var path: String
    public init(exported: Int, path: String) {
        self.exported = exported
        self.path = path
    }
    public static let schema = Schema.object([.required("exported", .index), .required("path", .string())])
    public static let example = ExportResult(exported: 1, path: "/tmp/memos.json")
}
