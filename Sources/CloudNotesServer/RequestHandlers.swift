import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesStore
import CloudNotesTransfer
import CloudNotesTransport
import Foundation

// MARK: - Handler table

/// How a request is scheduled relative to the others (see `Server` for the rules).
enum Scheduling: Sendable {
    /// Runs alone, in arrival order, before the next message is looked at.
    case ordered
    /// Starts in arrival order, then runs beside later requests; answered when it finishes.
    case background
}

/// What a handler gets besides its params.
struct RequestContext: Sendable {
    let id: RequestID
    let session: Session
    let writer: MessageWriter
}

/// The parts of the server that exist once `initialize` has been answered.
struct Session: Sendable {
    let mediator: SplitViewMediator
    let importer: MemoImporter
    let exporter: MemoExporter
    let sync: SyncCoordinator
    /// Imports count as bulk work: the background indexer waits for them.
    let bulkWork: BulkWork
    /// Whether `memo/import` and `memo/export` may read and write files (see `ServerConfiguration`).
    let allowsFiles: Bool

    func checkFileAccess() throws(ResponseError) {
        if !allowsFiles { throw .invalidParams(param: "path", "names a file, and this server reads and writes none") }
    }
}

/// A request handler with its request and result types erased, so handlers of all requests fit one table.
struct RequestHandler: Sendable {
    let scheduling: Scheduling
    /// Runs the request (of the handler's type), and writes the reply.
    let run: @Sendable (_ request: any RequestType, _ context: RequestContext) async -> Void
}

/// The handler of every request method, keyed by method name.
struct HandlerTable: Sendable {
    private(set) var handlers: [String: RequestHandler] = [:]

    subscript(method: String) -> RequestHandler? { handlers[method] }

    /// Registers `body` as the handler of `Request`; its result or error becomes the reply.
    mutating func on<Request: RequestType>(
        _ type: Request.Type, _ scheduling: Scheduling = .ordered,
        _ body: @escaping @Sendable (Request, RequestContext) async throws(ResponseError) -> Request.Response
    ) {
        handlers[Request.method] = RequestHandler(scheduling: scheduling) { request, context in
            do throws(ResponseError) {
                // The transport decoded it as the registry's type for this method, which is `Request`.
                guard let request = request as? Request else { throw .internalError("\(Request.method) decoded as \(Swift.type(of: request))") }
                context.writer.sendResult(try await body(request, context), id: context.id)
            } catch {
                context.writer.sendError(error, id: context.id)
            }
        }
    }
}

extension HandlerTable {
    /// The handlers of the memo requests; `initialize` and `shutdown` belong to the dispatcher's lifecycle,
    /// and the text changes (`memo/update`, `memo/edit`) go through `TextChangeBurst`, alone or not.
    static var memoRequests: HandlerTable {
        var table = HandlerTable()
        table.on(ListRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.list(request) }
        table.on(SearchRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.search(request) }
        table.on(CreateRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.create(request) }
        table.on(SelectRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.select(request) }
        table.on(DeleteRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.delete(request) }
        table.on(ShareRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.share(request) }
        table.on(HistoryRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.history(request) }
        table.on(VersionRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.version(request) }
        table.on(RestoreRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.restore(request) }
        table.on(TrashListRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.trash(request) }
        table.on(UndeleteRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.undelete(request) }
        table.on(TrashEmptyRequest.self) { request, context throws(ResponseError) in try await context.session.mediator.emptyTrash(request) }
        table.on(ImportRequest.self, .background, importMemos)
        table.on(ExportRequest.self, .background, exportMemos)
        table.on(SyncConfigureRequest.self) { request, context throws(ResponseError) in try await context.session.sync.configure(request) }
        table.on(SyncStatusRequest.self) { _, context throws(ResponseError) in try await context.session.sync.status() }
        table.on(SyncNowRequest.self, .background) { request, context throws(ResponseError) in
            try await context.session.sync.syncNow(progress: ProgressReporter(token: request.workDoneToken, writer: context.writer))
        }
        return table
    }

    // MARK: Long requests

    @Sendable static func importMemos(_ request: ImportRequest, _ context: RequestContext) async throws(ResponseError) -> ImportResult {
        if request.path != nil { try context.session.checkFileAccess() }
        let progress = ProgressReporter(token: request.workDoneToken, writer: context.writer)
        progress.begin("Importing memos")
        let importer = context.session.importer
        return try await progress.endingOnFailure { () async throws(ResponseError) in
            let imported = try await context.session.bulkWork.run { () async throws(ResponseError) in
                try await blocking { isCancelled throws(ResponseError) in
                    try importer.run(request, isCancelled: isCancelled) { done, total, message in
                        progress.report(done, of: total, message: message)
                    }
                }
            }
            // The split view learns of the new memos in its turn, between two interactive requests.
            try await context.session.mediator.didImport()
            await context.session.sync.noteLocalEdit()
            progress.end("Imported \(imported) memos")
            return ImportResult(imported: imported)
        }
    }

    @Sendable static func exportMemos(_ request: ExportRequest, _ context: RequestContext) async throws(ResponseError) -> ExportResult {
        try context.session.checkFileAccess()
        let progress = ProgressReporter(token: request.workDoneToken, writer: context.writer)
        progress.begin("Exporting memos")
        let exporter = context.session.exporter
        return try await progress.endingOnFailure { () async throws(ResponseError) in
            let result = try await blocking { isCancelled throws(ResponseError) in
                try exporter.export(request, isCancelled: isCancelled) { done, total in progress.report(done, of: total) }
            }
            progress.end("Exported \(result.exported) memos")
            return result
        }
    }

    /// Runs blocking work off the concurrency pool, keeping its typed error.
    private static func blocking<T: Sendable>(
        _ body: @escaping @Sendable (@escaping @Sendable () -> Bool) throws(ResponseError) -> T
    ) async throws(ResponseError) -> T {
        do {
            return try await BlockingWork.run { isCancelled in try body(isCancelled) }
        } catch let error as ResponseError {
            throw error
        } catch {
            throw Task.isCancelled ? .cancelled : .internalError(String(describing: error))
        }
    }
}
