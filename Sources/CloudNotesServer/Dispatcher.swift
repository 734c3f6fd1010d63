import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesStore
import CloudNotesTransfer
import CloudNotesTransport
import Foundation
import Logging

// MARK: - Dispatcher

/// Takes the client's messages one at a time, in arrival order, through the LSP lifecycle.
actor Dispatcher {
    /// Where the session is in LSP's lifecycle: before `initialize`, serving, or after `shutdown`.
    enum Lifecycle {
        case waitingForInitialize
        case running(Session)
        case shutDown
    }

    let store: MemoStore
    let writer: MessageWriter
    let configuration: ServerConfiguration
    let cancellations: CancellationRegistry
    let logger: Logger
    let handlers = HandlerTable.memoRequests
    let sync: SyncCoordinator
    let bulkWork: BulkWork
    /// Started once the first memo is shown: a client's first screen does not wait for it.
    let historyKeeper: HistoryKeeper

    var lifecycle = Lifecycle.waitingForInitialize
    var didStart = false
    /// Requests running in the background, awaited before `shutdown` is answered and before exiting.
    var background: [RequestID: Task<Void, Never>] = [:]

    init(store: MemoStore, writer: MessageWriter, configuration: ServerConfiguration, cancellations: CancellationRegistry,
         bulkWork: BulkWork, historyKeeper: HistoryKeeper, logger: Logger) {
        self.store = store
        self.historyKeeper = historyKeeper
        self.bulkWork = bulkWork
        self.writer = writer
        self.configuration = configuration
        self.cancellations = cancellations
        self.logger = logger
        sync = SyncCoordinator(store: store, writer: writer, settings: configuration.sync,
                               bulkWork: bulkWork, logger: logger)
    }

    /// Handles one message; returns an exit code when the message ends the process.
    func handle(_ message: IncomingMessage) async -> Int32? {
        switch message {
        case .ignored:
            return nil
        case .invalid(let id, let error):
            logger.notice("refused a message: \(error.message)")
            writer.sendError(error, id: id)
            return nil
        case .notification(let method, _):
            return await handleNotification(method)
        case .request(let id, let method, let params, _):
            await handleRequest(id: id, method: method, params: params)
            return nil
        }
    }

    /// Another process changed the store: the split view catches up, between two requests.
    func storeChangedElsewhere() async {
        guard case .running(let session) = lifecycle, didStart else { return }
        do {
            try await session.mediator.catchUpWithChangesElsewhere()
        } catch {
            logger.warning("cannot show the changes another process made: \(error.message)")
        }
    }

    // MARK: - Requests

    private func handleRequest(id: RequestID, method: String, params: Result<any RequestType, ResponseError>) async {
        if cancellations.takeCancellation(of: id) {
            writer.sendError(.cancelled, id: id)
            return
        }
        switch (lifecycle, method) {
        case (.waitingForInitialize, InitializeRequest.method):
            initialize(id: id, params: params)
        case (.waitingForInitialize, _):
            writer.sendError(.serverNotInitialized, id: id)
        case (.shutDown, _):
            writer.sendError(.invalidRequest("the server is shut down; only 'exit' is accepted"), id: id)
        case (.running, InitializeRequest.method):
            writer.sendError(.invalidRequest("the server is already initialized"), id: id)
        case (.running, ShutdownRequest.method):
            await shutdown(id: id)
        case (.running(let session), _):
            let request: any RequestType
            switch params {
            case .success(let decoded):
                request = decoded
            case .failure(let error):
                writer.sendError(error, id: id)  // an unknown method, or a bad param
                return
            }
            guard let handler = handlers[method] else {
                writer.sendError(.methodNotFound(method), id: id)
                return
            }
            let context = RequestContext(id: id, session: session, writer: writer)
            switch handler.scheduling {
            case .ordered:
                await handler.run(request, context)
            case .background:
                startInBackground(handler, request: request, context: context)
            }
            if Self.editingMethods.contains(method) { noteLocalEdit() }
        }
    }

    /// The requests that may change memos, after which a sync is due once edits settle.
    static let editingMethods: Set<String> = [
        CreateRequest.method, UpdateRequest.method, EditRequest.method, DeleteRequest.method,
        RestoreRequest.method, UndeleteRequest.method,
    ]

    /// Tells sync that memos changed here: a sync is due once edits settle.
    func noteLocalEdit() {
        guard sync.mayNeedSync else { return }
        // Not awaited: the next request must not wait while sync reads its state.
        let sync = sync
        Task { await sync.noteLocalEdit() }
    }

    /// Builds the list order in memory, in the background, once the first memo is shown.
    ///
    /// It is read on a connection of its own, and until it is built the first pages are read from the
    /// file (see `MemoStore.loadListOrder`): a client's first screen does not wait for it.
    private func loadListOrder() {
        let store = store
        Task.detached(priority: .utility) {
            _ = try? await BlockingWork.run { _ in try store.loadListOrder() }
        }
    }

    private func startInBackground(_ handler: RequestHandler, request: any RequestType, context: RequestContext) {
        let id = context.id
        let cancellations = cancellations
        let task = Task {
            await handler.run(request, context)
            cancellations.finish(id)
            self.backgroundDidFinish(id)  // the task runs on this actor
        }
        background[id] = task
        cancellations.register(id) { task.cancel() }
    }

    private func backgroundDidFinish(_ id: RequestID) {
        background[id] = nil
    }

    /// Waits for every request running in the background.
    func drain() async {
        while let (_, task) = background.first {
            await task.value
        }
    }

    private func initialize(id: RequestID, params: Result<any RequestType, ResponseError>) {
        do throws(ResponseError) {
            guard let request = try params.get() as? InitializeRequest else { throw .internalError("initialize decoded as another type") }
            let presenter = try MemoPresenter(localeIdentifier: request.locale, timeZoneIdentifier: request.timeZone)
            let sink = WriterSink(writer: writer)
            let mediator = SplitViewMediator(store: store, sink: sink, presenter: presenter, limits: configuration.limits)
            lifecycle = .running(Session(
                mediator: mediator, importer: MemoImporter(store: store), exporter: MemoExporter(store: store),
                sync: sync, bulkWork: bulkWork, allowsFiles: configuration.allowsFiles))
            logger.info("initialized by \(request.clientInfo?.name ?? "an unnamed client")")
            writer.sendResult(
                InitializeResult(
                    protocolVersion: ProtocolRegistry.protocolVersion,
                    serverInfo: .init(name: "cloudnotes", version: configuration.version),
                    capabilities: ProtocolRegistry.capabilities(limits: configuration.limits)),
                id: id)
        } catch {
            writer.sendError(error, id: id)
        }
    }

    private func shutdown(id: RequestID) async {
        await sync.stop()
        await drain()
        lifecycle = .shutDown
        writer.sendResult(VoidResponse(), id: id)
    }

    // MARK: - Notifications

    private func handleNotification(_ method: String) async -> Int32? {
        switch (lifecycle, method) {
        case (.shutDown, ExitNotification.method):
            return 0
        case (_, ExitNotification.method):
            return 1
        case (.running(let session), InitializedNotification.method):
            guard !didStart else { return nil }
            didStart = true
            do {
                try await session.mediator.start()
            } catch {
                logger.error("could not show the first memo: \(error.message)")
            }
            // The first memo goes out now, not with the batch's end: the sync's start (a hop to its actor
            // and a read) held it back at every start-up.
            writer.finishBatch()
            await sync.start()
            loadListOrder()
            historyKeeper.start()
        default:
            // Unknown notifications are ignored, as in LSP; `$/cancelRequest` was handled on arrival.
            if method != CancelRequestNotification.method {
                logger.debug("ignored the notification \(method)")
            }
        }
        return nil
    }
}

// MARK: - Notification sink

/// Delivers the mediator's notifications straight to the client, before the reply being prepared.
struct WriterSink: NotificationSink {
    let writer: MessageWriter
    func send(_ notification: some NotificationType) {
        writer.sendNotification(notification)
    }
}
