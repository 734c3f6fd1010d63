import CloudNotesProtocol
import MCP

// MARK: - A tool that failed

/// A tool call that could not do what it was asked: told to the assistant as a result with `isError`
/// and a sentence that says what to do, as MCP asks, so that it can correct itself.
struct ToolFailure: Error {
    var message: String
    /// What the assistant needs to try again (for a conflict, the memo as it is now).
    var structured: Value?

    init(_ message: String, structured: Value? = nil) {
        self.message = message
        self.structured = structured
    }

    /// A protocol error from the split view, in words for an assistant.
    init(_ error: ResponseError) {
        var message = error.message
        for prefix in ["Invalid params: ", "Internal error: "] where message.hasPrefix(prefix) {
            message.removeFirst(prefix.count)
        }
        if case .object(let data)? = error.data, case .string(let param)? = data["param"], !message.hasPrefix(param) {
            message = "\(param) \(message)"
        }
        if case .object(let data)? = error.data, case .array(let candidates)? = data["candidates"] {
            message += ": " + candidates.compactMap(\.stringValue).joined(separator: ", ")
        }
        if error.code == .memoNotFound {
            message += ". list_memos and search_memos give the ids of the memos there are"
        }
        self.init(message)
    }
}

// MARK: - Arguments

/// A tool call's arguments, read with failures that name the argument and say what it takes.
struct ToolArguments {
    private let values: [String: JSONValue]

    /// Refuses arguments the tool does not take, so that a misspelt one is not silently ignored.
    init(_ values: [String: JSONValue], of tool: MemoTool) throws(ToolFailure) {
        let unknown = values.keys.filter { !tool.argumentNames.contains($0) }.sorted()
        guard unknown.isEmpty else {
            let takes = tool.argumentNames.isEmpty ? "no arguments" : tool.argumentNames.joined(separator: ", ")
            throw ToolFailure("\(tool.rawValue) has no argument \(unknown.joined(separator: ", ")); it takes \(takes)")
        }
        self.values = values
    }

    /// A string argument the tool needs.
    func string(_ name: String) throws(ToolFailure) -> String {
        guard let value = try optionalString(name) else { throw ToolFailure("\(name) is missing: give it as a string") }
        return value
    }

    func optionalString(_ name: String) throws(ToolFailure) -> String? {
        switch values[name] {
        case nil, .null?: return nil
        case .string(let string)?: return string
        default: throw ToolFailure("\(name) must be a string")
        }
    }

    /// A whole number argument within `range`, or nil when absent.
    func integer(_ name: String, in range: ClosedRange<Int64>) throws(ToolFailure) -> Int64? {
        switch values[name] {
        case nil, .null?:
            return nil
        case .number(let number)?:
            // `exactly`: 2^63 and beyond, or a fraction, is no Int64 (a plain conversion would trap).
            if let whole = Int64(exactly: number), range.contains(whole) { return whole }
        default:
            break
        }
        throw ToolFailure("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
    }

    /// Where a page starts: the `cursor` a previous page gave, or the start.
    func cursor() throws(ToolFailure) -> Int {
        guard let cursor = try optionalString("cursor") else { return 0 }
        guard let offset = Cursor.offset(cursor) else { throw ToolFailure(Cursor.unknown) }
        return offset
    }
}

// MARK: - Cursors

/// The opaque cursors of paged results: where the next page starts.
enum Cursor {
    /// Why a cursor is refused.
    static let unknown = "cursor is not one this server gave: pass nextCursor from the previous page as it was, or leave it out to start over"

    static func after(_ offset: Int) -> String { "o\(offset)" }

    /// The cursor of the page after `count` items from `offset`, or nil when they reach `total`.
    static func next(from offset: Int, count: Int, total: Int) -> String? {
        count > 0 && offset + count < total ? after(offset + count) : nil
    }

    static func offset(_ cursor: String) -> Int? {
        guard cursor.hasPrefix("o"), let offset = Int(cursor.dropFirst()), offset >= 0 else { return nil }
        return offset
    }
}
