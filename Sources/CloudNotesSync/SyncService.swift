import CloudNotesProtocol
import CloudNotesStore
import Foundation
import Logging

// MARK: - Sync as the server and the shell run it

/// Sync for one store, as both the server (`sync/*`) and the shell (`cloudnotes sync`) run it: the
/// remote checked before it is set, the engine of one sync, and where sync stands.
public struct SyncService: Sendable {
    /// The store whose sync state is read and set.
    public let store: MemoStore
    /// Where credentials and the request timeout come from.
    let environment: [String: String]

    public init(store: MemoStore, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.store = store
        self.environment = environment
    }

    /// `url` as the store records it, once it opens: a mistyped or unmounted folder must not replace a
    /// working remote. Throws `SyncError.badRemote` for a URL sync does not speak, and what opening
    /// the remote throws otherwise.
    public func checkedRemote(_ url: String) throws -> String {
        let normalized = try RemoteURL(url).normalized
        _ = try openRemote(normalized, environment: environment)
        return normalized
    }

    /// The engine of one sync of `syncStore` (the store, or another connection to its file) with the
    /// store's remote. A remote that cannot be opened is recorded as that sync's failure.
    public func engine(for syncStore: MemoStore, logger: Logger) throws -> SyncEngine {
        guard let url = try store.syncState().remote else { throw SyncError.notConfigured }
        do {
            return SyncEngine(store: syncStore, remote: try openRemote(url, environment: environment), logger: logger)
        } catch {
            let error = SyncEngine.syncError(error)
            try? store.recordSyncEnd(at: SyncEngine.currentTime(), error: error.description)
            throw error
        }
    }

    /// Where sync stands, as `sync/status` and `cloudnotes sync --status` tell it.
    public func status(syncing: Bool = false, interval: Duration = .zero) throws -> SyncStatus {
        let state = try store.syncState()
        return SyncStatus(
            state: state.remote == nil ? .off : syncing ? .syncing : state.lastError != nil ? .failed : .idle,
            remote: state.remote, device: state.device, lastSync: state.lastSyncAt.map(Timestamp.init(milliseconds:)),
            lastError: state.lastError, pendingChanges: try store.unpublishedMemoCount(),
            conflicts: try store.openConflicts().compactMap { conflict in
                guard let memo = MemoID(conflict.memo), let copy = MemoID(conflict.copy) else { return nil }
                return SyncStatus.Conflict(memo: memo, copy: copy)
            },
            intervalSeconds: Int(interval.components.seconds), encrypted: state.holdsKey)
    }
}
