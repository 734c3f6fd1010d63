import CloudNotesProtocol
import CloudNotesStore
import Foundation
import MCP

// MARK: - Running the tools

extension MemoSession {
    /// Runs a `tools/call`: a result, or a result with `isError` that says what to do. An unknown tool
    /// (or a writing one under `--read-only`) is a protocol error, as MCP asks.
    func call(_ call: CallTool.Parameters) async throws -> CallTool.Result {
        guard let tool = MemoTool(rawValue: call.name), tools.contains(tool) else {
            let readOnly = MemoTool(rawValue: call.name).map { !$0.onlyReads } ?? false
            throw MCPError.invalidParams("Unknown tool: \(call.name)" + (readOnly ? " (the server is read-only: started with --read-only)" : ""))
        }
        return try await announcing {
            do {
                let output = try await run(tool, try ToolArguments(try RawArguments.of(call), of: tool))
                return CallTool.Result(content: [Self.text(Self.json(output))], structuredContent: LiteralStrings.protect(output) as Value?)
            } catch let failure as ToolFailure {
                return CallTool.Result(content: [Self.text(failure.message)], structuredContent: failure.structured.map(LiteralStrings.protect), isError: true)
            } catch let error as ResponseError {
                return CallTool.Result(content: [Self.text(ToolFailure(error).message)], isError: true)
            }
        }
    }

    private func run(_ tool: MemoTool, _ arguments: ToolArguments) async throws -> Value {
        switch tool {
        case .searchMemos:
            let query = try arguments.string("query")
            guard !query.isEmpty else { throw ToolFailure("query is empty: give at least one character to find") }
            let offset = try arguments.cursor()
            let page = try await mediator.find(query: query, offset: offset, limit: try limit(arguments))
            return Self.page(page, from: offset)
        case .listMemos:
            let offset = try arguments.cursor()
            let page = try await mediator.list(ListRequest(offset: offset, limit: try limit(arguments)))
            return Self.page(page, from: offset)
        case .readMemo:
            let memo = try await mediator.memo(try await memoID(arguments))
            return .object(try Self.textPage(of: memo, from: try arguments.cursor()))
        case .createMemo:
            let text = try arguments.string("text")
            guard !text.allSatisfy(\.isWhitespace) else {
                throw ToolFailure("text is blank: a memo needs some text (its first line is its title)")
            }
            return .object(Self.fields(of: try await mediator.create(CreateRequest(text: text)).memo))
        case .editMemo:
            return try await edit(arguments)
        case .deleteMemo:
            let id = try await memoID(arguments)
            let memo = try await mediator.memo(id)
            _ = try await mediator.delete(DeleteRequest(id: id))
            return ["id": .string(id.description), "title": .string(memo.title), "trashDays": .int(store.historyPolicy.trashDays)]
        }
    }

    /// `edit_memo`: the new text, unless the memo moved on from `baseVersion`; then the current text
    /// comes back to redo the change on, and nothing is overwritten.
    private func edit(_ arguments: ToolArguments) async throws -> Value {
        let id = try await memoID(arguments)
        let text = try arguments.string("text")
        let base = try arguments.integer("baseVersion", in: 1...Int64.max)
        var current = base ?? 0
        if base == nil { current = try await mediator.memo(id).version }
        let updated: Memo
        do {
            updated = try await mediator.update(UpdateRequest(id: id, text: text, baseVersion: current)).memo
        } catch {
            guard error.code == .versionConflict else { throw error }
            throw try await conflict(id, base: current)
        }
        return .object(Self.fields(of: updated))
    }

    /// The failure of an edit based on a version the memo moved on from: the memo as it is now.
    private func conflict(_ id: MemoID, base: Int64) async throws -> ToolFailure {
        let now = try await mediator.memo(id)
        let page = try Self.textPage(of: now, from: 0)
        let rest = page["nextCursor"] == nil ? "" : " (its start: read_memo gives the rest)"
        return ToolFailure("""
            The memo changed since version \(base): it is at version \(now.version) now (edited in an \
            editor, another session or another device), so your text was not saved. Its current text \
            is below\(rest); make your change to it and call edit_memo again with baseVersion \(now.version).

            \(page["text"]?.stringValue ?? "")
            """, structured: .object(page))
    }

    private func memoID(_ arguments: ToolArguments) async throws -> MemoID {
        try await mediator.memoID(matching: try arguments.string("id"))
    }

    private func limit(_ arguments: ToolArguments) throws(ToolFailure) -> Int {
        Int(try arguments.integer("limit", in: 1...MemoTool.maxLimit) ?? MemoTool.defaultLimit)
    }

    // MARK: Results

    /// A page of memo rows, and the cursor of the next page when there is one.
    private static func page(_ page: ListResult, from offset: Int) -> Value {
        var result: [String: Value] = [
            "total": .int(page.total),
            "memos": .array(page.rows.map { row in
                [
                    "id": .string(row.id.description), "uri": .string(MemoResource.uri(of: row.id)),
                    "title": .string(row.title), "preview": .string(row.preview),
                    "modifiedAt": .string(row.modifiedAt.iso8601),
                ]
            }),
        ]
        if let next = Cursor.next(from: offset, count: page.rows.count, total: page.total) { result["nextCursor"] = .string(next) }
        return .object(result)
    }

    /// What a memo's tools return of it, without its text.
    private static func fields(of memo: Memo) -> [String: Value] {
        // The title as the list shows it: a memo of one long line would otherwise be all title.
        let listTitle = MemoText(memo.text).listTitle
        let boundedTitle = listTitle.isEmpty ? memo.title : listTitle
        return [
            "id": .string(memo.id.description), "uri": .string(MemoResource.uri(of: memo.id)),
            "title": .string(boundedTitle), "createdAt": .string(memo.createdAt.iso8601),
            "modifiedAt": .string(memo.modifiedAt.iso8601), "version": .int(Int(memo.version)),
        ]
    }

    /// A memo with the page of its text that starts at character `offset`, counted in Unicode code
    /// points (as most languages count a string), so that no page is more than its length.
    private static func textPage(of memo: Memo, from offset: Int) throws(ToolFailure) -> [String: Value] {
        let text = memo.text.unicodeScalars
        let length = text.count
        guard offset <= length else { throw ToolFailure("cursor is past the end of the text: leave it out to read from the start") }
        let start = text.index(text.startIndex, offsetBy: offset)
        let end = text.index(start, offsetBy: MemoTool.textPageCharacters, limitedBy: text.endIndex) ?? text.endIndex
        var result = fields(of: memo)
        result["text"] = .string(String(text[start..<end]))
        result["textOffset"] = .int(offset)
        result["textLength"] = .int(length)
        if let next = Cursor.next(from: offset, count: text.distance(from: start, to: end), total: length) {
            result["nextCursor"] = .string(next)
        }
        return result
    }

    private static func text(_ text: String) -> Tool.Content {
        .text(text: text, annotations: nil, _meta: nil)
    }

    /// `value` as JSON text, for the text content that clients without structured results read.
    private static func json(_ value: Value) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
