import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesServer
import CloudNotesStore
import Logging
import MCP
import Synchronization

// MARK: - One assistant's session

/// The store as one MCP client sees it.
///
/// It holds the split view's mediator with no panes to show (so that its changes follow the same
/// rules, and are seen by open editors as any other process's), the memos' subscriptions, and the
/// notifications that tell the client what changed. An actor: the SDK runs each request in a task of its own, and the watcher of other processes
/// reports from its own; the subscriptions change only here.
actor MemoSession {
    let store: MemoStore
    let mediator: SplitViewMediator
    let tools: [MemoTool]
    private let listWatch: ResourceListWatch
    private let logger: Logger
    /// Where notifications go; set once the SDK's server exists.
    private var server: MCP.Server?
    /// Notifications wait for the client's `notifications/initialized`.
    private var initialized = false
    /// Each subscribed memo's URI, and its version as last told (nil: gone).
    private var subscriptions: [String: Int64?] = [:]

    init(store: MemoStore, readOnly: Bool, logger: Logger) {
        self.store = store
        self.logger = logger
        tools = MemoTool.allCases.filter { !readOnly || $0.onlyReads }
        listWatch = ResourceListWatch()
        mediator = SplitViewMediator(
            store: store, sink: listWatch, presenter: MemoPresenter(), limits: ProtocolRegistry.limits,
            discardsBlankSelection: false)
    }

    func attach(to server: MCP.Server) {
        self.server = server
    }

    /// Notes the client's `notifications/initialized`; true the first time only.
    func didInitialize() -> Bool {
        defer { initialized = true }
        return !initialized
    }

    // MARK: Changes elsewhere

    /// Catches up with other processes' changes (the watcher saw some) and tells the client.
    func catchUpWithChangesElsewhere(watcher: ExternalChangeWatcher) async {
        watcher.didHandleReport()
        do {
            try await mediator.catchUpWithChangesElsewhere()
        } catch {
            logger.warning("cannot follow other processes' changes: \(error.message)")
        }
        await announceChanges()
    }

    /// Tells the client what changed since it was last told: `notifications/resources/list_changed`
    /// when memos came or went, and `notifications/resources/updated` for each subscribed memo that
    /// changed or went.
    func announceChanges() async {
        guard initialized, let server else { return }
        if listWatch.takeChanged() {
            try? await server.notify(ResourceListChangedNotification.message())
        }
        // Read afresh at each step: the sends suspend, and an unsubscribe may come meanwhile.
        for uri in Array(subscriptions.keys) {
            guard let told = subscriptions[uri], let id = MemoResource.id(of: uri) else { continue }
            let now = (try? store.memo(id: id.description))?.version
            guard now != told else { continue }
            subscriptions.updateValue(now, forKey: uri)
            try? await server.notify(ResourceUpdatedNotification.message(.init(uri: uri)))
        }
    }

    // MARK: Resources

    func listResources(after cursor: String?) async throws -> ListResources.Result {
        try await announcing { try await MemoResource.list(after: cursor, in: mediator) }
    }

    func readResource(_ uri: String) async throws -> ReadResource.Result {
        try await announcing { try await MemoResource.read(uri, in: mediator) }
    }

    func subscribe(_ uri: String) async throws {
        let memo = try await announcing { try await MemoResource.memo(at: uri, in: mediator) }
        subscriptions.updateValue(memo.version, forKey: uri)
    }

    /// Runs `body`, then tells the client what changed: its own writes, and the other processes'
    /// changes its reads caught up with (which the watcher will not report again).
    func announcing<T>(_ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            await announceChanges()
            return result
        } catch {
            await announceChanges()
            throw error
        }
    }

    func unsubscribe(_ uri: String) {
        subscriptions.removeValue(forKey: uri)
    }
}

// MARK: - What the list heard

/// The mediator's notifications, read for one fact: whether memos came into the list or left it,
/// which changes the list of resources. The client has no panes to show the rest.
final class ResourceListWatch: NotificationSink {
    private let changed = Atomic(false)

    func send(_ notification: some NotificationType) {
        if notification is ListDidInsert || notification is ListDidRemove || notification is ListDidReset {
            changed.store(true, ordering: .releasing)
        }
    }

    /// Whether the list changed since the last call.
    func takeChanged() -> Bool {
        changed.exchange(false, ordering: .acquiringAndReleasing)
    }
}
