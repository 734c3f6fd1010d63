import CloudNotesMediator
import CloudNotesProtocol
import MCP

// MARK: - Memos as resources

/// Each memo as the resource `cloudnotes://memo/<id>`: listed newest first a page at a time, read as
/// plain text.
enum MemoResource {
    static let scheme = "cloudnotes://memo/"
    /// The resources a page of `resources/list` holds.
    static let pageSize = 100
    /// MCP's code for a resource that does not exist.
    static let notFoundCode = -32002

    static let template = Resource.Template(
        uriTemplate: "\(scheme){id}", name: "memo", title: "A memo",
        description: "A memo's text; its first line is its title.", mimeType: "text/plain")

    static func uri(of id: MemoID) -> String { scheme + id.description }

    /// The memo id a URI names, or nil when it names none.
    static func id(of uri: String) -> MemoID? {
        guard uri.hasPrefix(scheme) else { return nil }
        return MemoID(String(uri.dropFirst(scheme.count)))
    }

    /// A page of the memos, newest first, from `cursor` (or the start).
    static func list(after cursor: String?, in mediator: SplitViewMediator) async throws -> ListResources.Result {
        var offset = 0
        if let cursor {
            guard let found = Cursor.offset(cursor) else { throw MCPError.invalidParams(Cursor.unknown) }
            offset = found
        }
        let page = try await translating { try await mediator.list(ListRequest(offset: offset, limit: pageSize)) }
        let resources = page.rows.map { row in
            Resource(
                name: LiteralStrings.protect(row.title), uri: uri(of: row.id), title: LiteralStrings.protect(row.title),
                description: LiteralStrings.protect(row.preview),
                mimeType: "text/plain", annotations: Resource.Annotations(lastModified: row.modifiedAt.iso8601))
        }
        return ListResources.Result(resources: resources, nextCursor: Cursor.next(from: offset, count: page.rows.count, total: page.total))
    }

    static func read(_ uri: String, in mediator: SplitViewMediator) async throws -> ReadResource.Result {
        let memo = try await memo(at: uri, in: mediator)
        return ReadResource.Result(contents: [.text(LiteralStrings.protect(memo.text), uri: uri, mimeType: "text/plain")])
    }

    /// The memo `uri` names, or the error that says it names none.
    static func memo(at uri: String, in mediator: SplitViewMediator) async throws -> Memo {
        guard let id = id(of: uri) else {
            throw MCPError.invalidParams("uri \(uri) is not a memo's: they are \(scheme)<id>")
        }
        do {
            return try await mediator.memo(id)
        } catch where error.code == .memoNotFound {
            throw MCPError.serverError(code: notFoundCode, message: "Resource not found: \(uri)")
        } catch {
            throw MCPError.internalError(error.message)
        }
    }

    /// A protocol error from the split view as the SDK's.
    private static func translating<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as ResponseError {
            throw error.code == .invalidParams ? MCPError.invalidParams(error.message) : MCPError.internalError(error.message)
        }
    }
}
