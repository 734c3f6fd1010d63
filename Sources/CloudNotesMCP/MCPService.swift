import CloudNotesProtocol
import CloudNotesServer
import CloudNotesStore
import Logging
import MCP

// MARK: - `cloudnotes mcp`

/// The store served to an assistant over the Model Context Protocol, on stdin and stdout.
///
/// Through the official Swift SDK: the memos as tools and as resources, and notifications when they
/// change in any process.
public enum MCPService {
    /// The instructions the client may hand its model.
    static let instructions = """
        The user's CloudNotes memos: plain-text notes whose first line is the title, shared live with \
        the user's editor. Find memos with search_memos or list_memos, read one with read_memo, and \
        pass the version it returns to edit_memo as baseVersion so that nothing the user typed \
        meanwhile is overwritten. delete_memo moves a memo to the trash, from which it can be brought back.
        """

    /// Serves until the client closes stdin.
    public static func run(store: MemoStore, readOnly: Bool, input: Int32, output: Int32, logger: Logger) async throws {
        store.authorChanges(as: .assistant)
        let session = MemoSession(store: store, readOnly: readOnly, logger: logger)
        let server = MCP.Server(
            name: "cloudnotes", version: ProtocolRegistry.serverVersion, title: "CloudNotes",
            instructions: instructions,
            capabilities: .init(resources: .init(subscribe: true, listChanged: true), tools: .init(listChanged: false)),
            // The transport refuses what comes before `initialize` (see `VettedTransport`).
            configuration: .default)
        await session.attach(to: server)
        await register(session, on: server)
        let watcher = ExternalChangeWatcher(store: store, logger: logger)
        await server.onNotification(InitializedNotification.self) { _ in
            guard await session.didInitialize() else { return }
            watcher.start { Task { await session.catchUpWithChangesElsewhere(watcher: watcher) } }
        }
        let transport = VettedTransport(input: input, output: output, limits: ProtocolRegistry.limits, logger: logger)
        try await server.start(transport: transport)
        await server.waitUntilCompleted()
        watcher.stop()
    }

    private static func register(_ session: MemoSession, on server: MCP.Server) async {
        await server.withMethodHandler(ListTools.self) { _ in
            ListTools.Result(tools: session.tools.map(\.definition))
        }
        await server.withMethodHandler(CallTool.self) { call in
            try await session.call(call)
        }
        await server.withMethodHandler(ListResources.self) { params in
            try await session.listResources(after: params.cursor)
        }
        await server.withMethodHandler(ListResourceTemplates.self) { _ in
            ListResourceTemplates.Result(templates: [MemoResource.template])
        }
        await server.withMethodHandler(ReadResource.self) { params in
            try await session.readResource(params.uri)
        }
        await server.withMethodHandler(ResourceSubscribe.self) { params in
            try await session.subscribe(params.uri)
            return Empty()
        }
        await server.withMethodHandler(ResourceUnsubscribe.self) { params in
            await session.unsubscribe(params.uri)
            return Empty()
        }
    }
}
