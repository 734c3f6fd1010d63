// MARK: - sync/configure

/// Sets the store's remote (or stops syncing) and how often the server syncs on its own.
public struct SyncConfigureRequest: RequestType, Hashable {
    public static let method = "sync/configure"
    public static let summary = "Sets the remote (file:///folder, http(s):// WebDAV or s3://bucket/prefix) and the sync interval; the server then syncs."
    public typealias Response = SyncStatus

    /// `file:///path` (the folder must exist), `http(s)://host/path/` or `s3://bucket/prefix`; null stops
    /// syncing. Credentials never go here: the server reads them from its environment, a netrc file or
    /// `~/.aws`.
    public var remote: String?
    /// Seconds between the server's own syncs; default 300, 0 for none (it still syncs after edits).
    public var intervalSeconds: Int?
    /// Publish every revision anew, even when the remote is unchanged (after it lost this store's history).
    public var republish: Bool?
    /// Make the new remote an encrypted one (protocol/sync.md, "Encryption"); `passphrase` is then needed.
    /// A remote that is encrypted already needs no `encrypt`, only its passphrase.
    public var encrypt: Bool?
    /// The encrypted remote's passphrase: used by the sync that follows to make or open the remote's key,
    /// which the store then keeps; never stored, logged or sent back.
    public var passphrase: String?

    public init(remote: String?, intervalSeconds: Int? = nil, republish: Bool? = nil, encrypt: Bool? = nil,
                passphrase: String? = nil) {
        self.remote = remote
        self.intervalSeconds = intervalSeconds
        self.republish = republish
        self.encrypt = encrypt
        self.passphrase = passphrase
    }

    public static let schema = Schema.object([
        .required("remote", .nullable(.string()), "file:///folder, http(s):// WebDAV collection or s3://bucket/prefix; null stops syncing."),
        .optional("intervalSeconds", .integer(minimum: 0), "Seconds between automatic syncs; default 300, 0 for none."),
        .optional("republish", .boolean, "Publish everything anew on this remote; default false."),
        .optional("encrypt", .boolean, "Make the remote an encrypted one (it must be new); default false."),
        .optional("passphrase", .string(),
                  "The encrypted remote's passphrase, for the sync that follows; the store keeps the key, never the passphrase."),
    ])
    public static let example = SyncConfigureRequest(remote: "https://dav.example.com/notes/")
}

// MARK: - sync/now

/// Syncs now: publishes local changes, applies other devices' changes, and answers when done.
public struct SyncNowRequest: RequestType, Hashable {
    public static let method = "sync/now"
    public static let summary = "Syncs with the remote now; cancellable; reports $/progress under workDoneToken."
    public typealias Response = SyncResult

    public var workDoneToken: ProgressToken?
    public init(workDoneToken: ProgressToken? = nil) { self.workDoneToken = workDoneToken }
    public static let schema = Schema.object([.optional("workDoneToken", .progressToken)])
    public static let example = SyncNowRequest()
}

/// What one sync did.
public struct SyncResult: ResponseType, Hashable {
    /// Memos changed here by other devices' edits (they reached the lists as list/* notifications).
    public var changedMemos: Int
    /// Conflicts met; each is kept as a conflict copy, listed in `status.conflicts`.
    public var conflicts: Int
    /// Revisions of this device's changes published.
    public var published: Int
    /// Requests made to the remote.
    public var requests: Int
    public var status: SyncStatus

    public init(changedMemos: Int, conflicts: Int, published: Int, requests: Int, status: SyncStatus) {
        self.changedMemos = changedMemos
        self.conflicts = conflicts
        self.published = published
        self.requests = requests
        self.status = status
    }

    public static let schema = Schema.object([
        .required("changedMemos", .index), .required("conflicts", .index), .required("published", .index),
        .required("requests", .index), .required("status", .reference("SyncStatus")),
    ])
    public static let example = SyncResult(changedMemos: 2, conflicts: 0, published: 1, requests: 6, status: .example)
}

// MARK: - sync/status

/// Where sync stands.
public struct SyncStatusRequest: RequestType, ParameterlessMessage, Hashable {
    public static let method = "sync/status"
    public static let summary = "The remote, the last sync, what waits to be published and any conflict."
    public typealias Response = SyncStatus
    public init() {}
}

/// Where sync stands: the answer of `sync/status` and `sync/configure`, and `sync/didChange`'s params.
public struct SyncStatus: ResponseType, Hashable {
    /// What sync is doing now.
    public enum Activity: String, Codable, Sendable, CaseIterable {
        /// No remote is set.
        case off
        case idle
        case syncing
        /// The last sync failed (`lastError` says why); the next one tries again.
        case failed
    }

    /// A conflict kept as a copy: deleting the copy (once merged by hand) settles it.
    public struct Conflict: Codable, Sendable, Hashable {
        public var memo: MemoID
        public var copy: MemoID
        public init(memo: MemoID, copy: MemoID) {
            self.memo = memo
            self.copy = copy
        }
    }

    public var state: Activity
    public var remote: String?
    /// This store's device id.
    public var device: String
    public var lastSync: Timestamp?
    public var lastError: String?
    /// Memos changed here and not yet published.
    public var pendingChanges: Int
    public var conflicts: [Conflict]
    /// Seconds between automatic syncs; 0 for none.
    public var intervalSeconds: Int
    /// Whether the remote is encrypted and this store holds its key.
    public var encrypted: Bool

    public init(state: Activity, remote: String?, device: String, lastSync: Timestamp?, lastError: String?,
                pendingChanges: Int, conflicts: [Conflict], intervalSeconds: Int, encrypted: Bool = false) {
        self.state = state
        self.remote = remote
        self.device = device
        self.lastSync = lastSync
        self.lastError = lastError
        self.pendingChanges = pendingChanges
        self.conflicts = conflicts
        self.intervalSeconds = intervalSeconds
        self.encrypted = encrypted
    }

    public static let schema = Schema.object([
        .required("state", .enumeration(Activity.allCases.map(\.rawValue))),
        .optional("remote", .string(), "Absent when the store does not sync."),
        .required("device", .string(), "This store's device id: 32 hex digits."),
        .optional("lastSync", .timestamp, "When the last successful sync ended."),
        .optional("lastError", .string(), "Why the last sync failed; absent when it succeeded."),
        .required("pendingChanges", .index),
        .required("conflicts", .array(.object([.required("memo", .memoID), .required("copy", .memoID)]))),
        .required("intervalSeconds", .index),
        .required("encrypted", .boolean, "The remote is encrypted, and this store holds its key."),
    ])
    public static let example = SyncStatus(
        state: .idle, remote: "https://dav.example.com/notes/", device: "3f2a9c0d1b8e4f6a7c5d2e1f0a9b8c7d",
        lastSync: Timestamp(milliseconds: 1_767_225_600_000), lastError: nil, pendingChanges: 0, conflicts: [],
        intervalSeconds: 300)
}

// MARK: - sync/didChange

/// Sync's state changed: a sync started or ended, failed, or met a conflict.
public struct SyncDidChange: NotificationType, Hashable {
    public static let method = "sync/didChange"
    public static let summary = "Sync's state changed (started, finished, failed, a conflict); `status` is as sync/status answers."
    public var status: SyncStatus
    public init(status: SyncStatus) { self.status = status }
    public static let schema = Schema.object([.required("status", .reference("SyncStatus"))])
    public static let example = SyncDidChange(status: .example)
}
