import CloudNotesStore
import Foundation
import Logging
import Synchronization

// MARK: - Keeping the history within its policy

/// Applies the store's history policy (`HistoryPolicy`) while the server runs: once the first memo is
/// shown (the dispatcher starts it), then every `interval`. Memos in the trash past their days are
/// purged, and versions past the policy pruned.
final class HistoryKeeper: Sendable {
    static let interval: Duration = .seconds(3600)

    private let store: MemoStore
    private let logger: Logger
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(store: MemoStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func start() {
        let newTask = Task.detached(priority: .utility) { [self] in
            while !Task.isCancelled {
                apply()
                try? await Task.sleep(for: Self.interval)
            }
        }
        task.withLock { $0 = newTask }
    }

    func stop() {
        task.withLock { $0?.cancel() }
    }

    private func apply() {
        guard !store.isReadOnly else { return }
        do {
            let (purged, pruned) = try store.applyHistoryPolicy(now: Int64(Date().timeIntervalSince1970 * 1000))
            if purged + pruned > 0 { logger.info("purged \(purged) memos from the trash and pruned \(pruned) versions") }
        } catch {
            logger.warning("cannot apply the history policy: \(error)")
        }
    }
}
