// MARK: - Registry

/// Every message of the CloudNotes protocol, in one place.
///
/// The dispatcher registers a handler for each request listed here, `initialize` advertises them, and
/// the specification in `protocol/` is checked against this list.
public enum ProtocolRegistry {
    public static let protocolVersion = "1.2"
    /// The server's version, as `initialize` tells it and `cloudnotes --version` prints it.
    public static let serverVersion = "0.1.0"

    /// The limits every request is held to, as `initialize` tells them.
    public static let limits = InitializeResult.Limits(
        maxMessageBytes: 32 << 20, maxMemoBytes: 16 << 20, maxNestingDepth: 64, maxListLimit: 1000)

    /// Requests a client may send.
    public static let requests: [any RequestType.Type] = [
        InitializeRequest.self, ShutdownRequest.self,
        ListRequest.self, SearchRequest.self,
        CreateRequest.self, SelectRequest.self, UpdateRequest.self, EditRequest.self, DeleteRequest.self,
        ShareRequest.self, ImportRequest.self, ExportRequest.self,
        HistoryRequest.self, VersionRequest.self, RestoreRequest.self,
        TrashListRequest.self, UndeleteRequest.self, TrashEmptyRequest.self,
        SyncConfigureRequest.self, SyncNowRequest.self, SyncStatusRequest.self,
    ]

    /// Notifications a client may send.
    public static let clientNotifications: [any NotificationType.Type] = [
        InitializedNotification.self, ExitNotification.self, CancelRequestNotification.self,
    ]

    /// Notifications the server sends.
    public static let serverNotifications: [any NotificationType.Type] = [
        ListDidInsert.self, ListDidUpdate.self, ListDidRemove.self, ListDidReset.self,
        SelectionDidChange.self, DetailDidShow.self, DetailDidClear.self, ProgressNotification.self,
        SyncDidChange.self,
    ]

    /// Named shapes that messages refer to.
    public static let definitions: [String: Schema] = [
        "Memo": Memo.schema, "MemoRow": MemoRow.schema, "ImportEntry": ImportEntry.schema,
        "TextEdit": TextEdit.schema, "VersionRow": VersionRow.schema, "TrashRow": TrashRow.schema,
        "SyncStatus": SyncStatus.schema,
    ]

    public static func capabilities(limits: InitializeResult.Limits) -> InitializeResult.Capabilities {
        InitializeResult.Capabilities(
            requests: requests.map { $0.method },
            notifications: clientNotifications.map { $0.method },
            serverNotifications: serverNotifications.map { $0.method },
            shareFormats: ShareFormat.allCases.map(\.rawValue),
            exportFormats: ExportFormat.allCases.map(\.rawValue),
            limits: limits)
    }
}
