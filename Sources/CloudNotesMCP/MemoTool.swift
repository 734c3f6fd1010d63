import MCP

// MARK: - The tools

/// The tools `cloudnotes mcp` offers, with the JSON Schemas of their input and structured output.
///
/// `protocol/mcp.md` describes them for people; `test_mcp.py` checks the two agree.
enum MemoTool: String, CaseIterable, Sendable {
    case searchMemos = "search_memos"
    case listMemos = "list_memos"
    case readMemo = "read_memo"
    case createMemo = "create_memo"
    case editMemo = "edit_memo"
    case deleteMemo = "delete_memo"

    /// Whether the tool only reads: the only ones `--read-only` offers.
    var onlyReads: Bool {
        switch self {
        case .searchMemos, .listMemos, .readMemo: true
        case .createMemo, .editMemo, .deleteMemo: false
        }
    }

    /// The most rows a page of memos holds, and the rows it holds when `limit` is not given.
    static let maxLimit: Int64 = 100
    static let defaultLimit: Int64 = 20
    /// The most characters of a memo's text that one `read_memo` returns.
    static let textPageCharacters = 20_000

    var argumentNames: [String] {
        Array(properties.keys).sorted()
    }

    var definition: Tool {
        Tool(
            name: rawValue,
            title: title,
            description: summary,
            inputSchema: .object([
                "type": "object",
                "properties": .object(properties),
                "required": .array(required.map(Value.string)),
                "additionalProperties": false,
            ]),
            annotations: Tool.Annotations(
                readOnlyHint: onlyReads, destructiveHint: self == .deleteMemo || self == .editMemo,
                idempotentHint: onlyReads, openWorldHint: false),
            outputSchema: outputSchema)
    }

    private var title: String {
        switch self {
        case .searchMemos: "Search memos"
        case .listMemos: "List memos"
        case .readMemo: "Read a memo"
        case .createMemo: "Create a memo"
        case .editMemo: "Edit a memo"
        case .deleteMemo: "Delete a memo"
        }
    }

    private var summary: String {
        switch self {
        case .searchMemos:
            "Finds the memos whose text holds `query` (case-insensitive, any language, from one character), newest first. Returns ids, titles and a preview; read_memo gives a memo's text."
        case .listMemos:
            "Lists the memos, most recently changed first, a page at a time. Returns ids, titles and a preview; read_memo gives a memo's text."
        case .readMemo:
            "Reads a memo: its text, title, times and version. A long text comes in pages: pass nextCursor back as cursor for the next one."
        case .createMemo:
            "Creates a memo from `text`; its first line is its title. Returns the new memo's id and version."
        case .editMemo:
            "Replaces a memo's whole text. Pass the version read_memo returned as baseVersion: if the memo changed since (in an editor, on another device), nothing is overwritten and the current text comes back to redo the change on."
        case .deleteMemo:
            "Moves a memo to the trash, where it stays for the trash's days (30 by default) and can be brought back with `cloudnotes undelete`."
        }
    }

    private var properties: [String: Value] {
        let id: Value = ["type": "string", "description": "The memo's id, or enough of its first characters to name one memo."]
        let limit: Value = [
            "type": "integer", "minimum": 1, "maximum": .int(Int(Self.maxLimit)),
            "description": .string("The most memos to return; \(Self.defaultLimit) if not given."),
        ]
        let cursor: Value = ["type": "string", "description": "nextCursor from the previous page, to get the next one."]
        switch self {
        case .searchMemos:
            return ["query": ["type": "string", "minLength": 1, "description": "The text to find."], "limit": limit, "cursor": cursor]
        case .listMemos:
            return ["limit": limit, "cursor": cursor]
        case .readMemo:
            return ["id": id, "cursor": cursor]
        case .createMemo:
            return ["text": ["type": "string", "description": "The memo's text; its first line is its title."]]
        case .editMemo:
            return [
                "id": id,
                "text": ["type": "string", "description": "The memo's new full text."],
                "baseVersion": ["type": "integer", "minimum": 1, "description": "The version the new text was based on, as read_memo returned it."],
            ]
        case .deleteMemo:
            return ["id": id]
        }
    }

    private var required: [String] {
        switch self {
        case .searchMemos: ["query"]
        case .listMemos: []
        case .readMemo, .deleteMemo: ["id"]
        case .createMemo: ["text"]
        case .editMemo: ["id", "text"]
        }
    }

    // MARK: Output

    private var outputSchema: Value {
        switch self {
        case .searchMemos, .listMemos:
            return Self.object([
                "total": ["type": "integer", "description": "How many memos there are in all (that match, for a search)."],
                "memos": ["type": "array", "items": Self.row],
                "nextCursor": ["type": "string", "description": "Pass it as cursor for the next page; absent on the last page."],
            ], required: ["total", "memos"])
        case .readMemo:
            return Self.object(Self.memoProperties.merging([
                "text": ["type": "string", "description": "The text, or the page of it that starts at textOffset."],
                "textOffset": ["type": "integer", "description": "The character of the text this page starts at."],
                "textLength": ["type": "integer", "description": "The whole text's length in characters."],
                "nextCursor": ["type": "string", "description": "Pass it as cursor for the rest of the text; absent on its last page."],
            ]) { $1 }, required: Self.memoRequired + ["text", "textOffset", "textLength"])
        case .createMemo, .editMemo:
            return Self.object(Self.memoProperties, required: Self.memoRequired)
        case .deleteMemo:
            return Self.object([
                "id": ["type": "string"],
                "title": ["type": "string"],
                "trashDays": ["type": "integer", "description": "The days it stays in the trash."],
            ], required: ["id", "title", "trashDays"])
        }
    }

    private static let memoProperties: [String: Value] = [
        "id": ["type": "string"],
        "uri": ["type": "string", "description": "The memo as a resource."],
        "title": ["type": "string", "description": "The text's first line."],
        "createdAt": ["type": "string", "description": "ISO 8601, UTC."],
        "modifiedAt": ["type": "string", "description": "ISO 8601, UTC."],
        "version": ["type": "integer", "description": "Pass it to edit_memo as baseVersion."],
    ]
    private static let memoRequired = ["id", "uri", "title", "createdAt", "modifiedAt", "version"]

    private static let row = object([
        "id": ["type": "string"],
        "uri": ["type": "string"],
        "title": ["type": "string"],
        "preview": ["type": "string", "description": "The start of the text after the title."],
        "modifiedAt": ["type": "string", "description": "ISO 8601, UTC."],
    ], required: ["id", "uri", "title", "preview", "modifiedAt"])

    private static func object(_ properties: [String: Value], required: [String]) -> Value {
        ["type": "object", "properties": .object(properties), "required": .array(required.map(Value.string))]
    }
}
