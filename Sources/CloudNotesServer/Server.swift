import CloudNotesProtocol
import CloudNotesStore
import CloudNotesTransport
import Foundation
import Logging
import Synchronization

// MARK: - Configuration

/// The server's fixed settings.
public struct ServerConfiguration: Sendable {
    public var version: String
    public var limits: InitializeResult.Limits
    /// Whether `memo/import` and `memo/export` may use files; off for the fuzzer, whose inputs must
    /// never reach the file system, however they spell `path`.
    public var allowsFiles: Bool
    /// When the server syncs on its own.
    public var sync: SyncSettings = .standard
    /// What of the history the store keeps: versions and the trash.
    public var history = HistoryPolicy()

    public static let standard = ServerConfiguration(version: ProtocolRegistry.serverVersion, limits: ProtocolRegistry.limits)

    public init(version: String, limits: InitializeResult.Limits, allowsFiles: Bool = true) {
        self.version = version
        self.limits = limits
        self.allowsFiles = allowsFiles
    }
}

// MARK: - Server

/// A CloudNotes server on a pair of file descriptors: JSON-RPC 2.0, in JSON lines or with LSP's
/// `Content-Length` headers, whichever the client's first message used.
///
/// Concurrency rules (which messages may overtake which): C1–C6 are the spec's (`protocol/README.md`
/// §4); C7–C9 are the server's own, beyond the spec.
/// C1. `$/cancelRequest` overtakes everything: the reader thread applies it the moment it arrives
///    (at most `maxQueuedMessages` messages wait to be handled; behind a longer backlog the reader pauses,
///    and a cancellation is seen once the backlog shrinks).
/// C2. Every other message is taken in arrival order by one dispatcher. A request that touches the split
///    view (`memo/list`, `search`, `create`, `select`, `update`, `delete`, `share`) runs to its reply
///    before the next message is looked at, so its notifications and reply describe the state after it
///    and before anything later.
///    Text changes of the selected memo (`memo/update`, `memo/edit`) already queued behind each other
///    are taken as one burst (`TextChangeBurst`): committed in runs, one transaction each, then
///    announced and answered one by one, in order, as each would have been alone.
/// C3. `memo/import` and `memo/export` start in order but do their long part in the background; later
///    requests overtake them. An import's effect on the list reaches the split view as one step taken
///    between two requests (`list/didReset`), never in the middle of one.
/// C4. `shutdown` waits for background requests; at end of input, the server finishes them, then exits.
/// C5. A change another process committed to the store (a second editor, the shell) is noticed within
///    `ExternalChangeWatcher.interval` and reaches the split view in one step taken between two
///    requests: the list memo by memo (one `list/didReset` past a hundred), then the selection and the
///    detail as they now are.
/// C6. Sync (`sync/now`, and the server's own syncs: at start, after edits settle, periodically) runs
///    in the background through its own connection to the store; what it changes reaches the split
///    view as rule C5 says, and `sync/didChange` may arrive between any two messages. Its transactions
///    take turns with the requests' at the write lock in the order they ask for it (`WriteTurns`): a
///    request waits for the sync's transaction under way, and one that applies a pulled segment commits
///    after its part under way (about 100 revisions) when a request waits.
/// C7. The background indexer (imported and long memos into the full-text index) works only while the
///    client has been quiet for a moment and no sync or import runs (`BulkWork`), one short
///    transaction at a time, and a message that arrives during one stops it (`IndexingInterruption`;
///    the chunk rolls back): any request overtakes it.
/// C8. Checkpoints of the write-ahead log run on a connection and a queue of their own
///    (`LogCheckpointer`), beside requests: a commit waits for one only when the log has grown past
///    10,000 pages without a pause.
/// C9. The history policy (the trash's days, the versions' pruning) is applied once the first memo is
///    shown, then every hour, by `HistoryKeeper`, in transactions of a hundred memos that take turns at the write lock with the
///    requests'; it changes nothing a list shows.
/// The types enforce this: the mediator is an actor whose methods never suspend, the dispatcher is an
/// actor awaited one message at a time, and everything shared across threads is `Sendable`.
public final class Server: Sendable {
    let reader: MessageReader
    let writer: MessageWriter
    let decoder: MessageDecoder
    let dispatcher: Dispatcher
    let cancellations = CancellationRegistry()
    let indexer: BackgroundIndexer
    let watcher: ExternalChangeWatcher
    let historyKeeper: HistoryKeeper
    let logger: Logger

    public init(store: MemoStore, input: Int32, output: Int32, configuration: ServerConfiguration = .standard, logger: Logger) {
        for (name, pipe) in [("input", input), ("output", output)] {
            if let bytes = PipeCapacity.enlarge(fileDescriptor: pipe) { logger.debug("\(name) pipe: \(bytes) bytes") }
        }
        reader = MessageReader(fileDescriptor: input, maxMessageBytes: configuration.limits.maxMessageBytes)
        writer = MessageWriter(fileDescriptor: output)
        decoder = MessageDecoder(maxNestingDepth: configuration.limits.maxNestingDepth)
        let bulkWork = BulkWork()
        store.historyPolicy = configuration.history
        historyKeeper = HistoryKeeper(store: store, logger: logger)
        dispatcher = Dispatcher(store: store, writer: writer, configuration: configuration, cancellations: cancellations,
                                bulkWork: bulkWork, historyKeeper: historyKeeper, logger: logger)
        indexer = BackgroundIndexer(store: store, bulkWork: bulkWork, logger: logger)
        watcher = ExternalChangeWatcher(store: store, logger: logger)
        self.logger = logger
    }

    /// Messages read but not yet handled, at most.
    static let maxQueuedMessages = 256

    /// What the run loop takes, one at a time: the client's messages, and news that another process
    /// changed the store.
    enum Event: Sendable {
        case message(IncomingMessage)
        case storeChangedElsewhere
    }

    /// The event held back from the last burst, else the next one from the queue.
    private static func next(_ held: inout Event?, queue: inout AsyncStream<Event>.Iterator) async -> Event? {
        if let event = held {
            held = nil
            return event
        }
        return await queue.next()
    }

    /// Serves until `exit` or end of input, and returns the process's exit code.
    public func run() async -> Int32 {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        // Backpressure: at most `maxQueuedMessages` wait; then the reader stops reading until the
        // dispatcher catches up, so a client that writes faster than it reads cannot exhaust memory.
        let queueSlots = QueueSlots(count: Self.maxQueuedMessages)
        // How many messages wait behind the one being handled: while some do, replies are written in
        // batches (see `MessageWriter`), so a burst of requests costs a few writes, not one per message.
        let waiting = Atomic(0)
        let decoder = decoder
        let cancellations = cancellations
        let indexer = indexer
        let watcher = watcher
        indexer.start()
        watcher.start { continuation.yield(.storeChangedElsewhere) }
        defer {
            indexer.stop()
            watcher.stop()
            historyKeeper.stop()
        }
        let writer = writer
        reader.start(
            onFraming: { framing in writer.use(framing) },
            onFrame: { frame in
                indexer.noteActivity()
                let message = decoder.decode(frame)
                if case .notification(CancelRequestNotification.method, let params) = message {
                    if let cancel = params as? CancelRequestNotification { cancellations.cancel(cancel.id) }
                    return
                }
                queueSlots.take()
                waiting.add(1, ordering: .relaxed)
                continuation.yield(.message(message))
            },
            onEnd: { continuation.finish() })
        var queue = events.makeAsyncIterator()
        // An event taken from the queue while looking for the end of a burst, handled next.
        var held: Event?
        while let event = await Self.next(&held, queue: &queue) {
            switch event {
            case .message(let message):
                writer.startBatch()
                let burst = await TextChangeBurst.take(message, queue: &queue, held: &held, waiting: waiting)
                let code: Int32?
                if TextChangeBurst.canJoin(message) {
                    // Alone or with the changes queued behind it: one path for every text change.
                    await dispatcher.handleBurst(burst)
                    code = nil
                } else {
                    code = await dispatcher.handle(message)
                }
                for _ in burst { queueSlots.release() }
                if waiting.subtract(burst.count, ordering: .relaxed).newValue == 0 || code != nil {
                    writer.finishBatch()
                } else {
                    writer.continueBatch()
                }
                if let code {
                    logger.info("exit with code \(code)")
                    return code
                }
            case .storeChangedElsewhere:
                watcher.didHandleReport()
                await dispatcher.storeChangedElsewhere()
                writer.finishBatch()
            }
        }
        writer.finishBatch()
        logger.info("end of input: finishing background work")
        await dispatcher.drain()
        return 0
    }
}
