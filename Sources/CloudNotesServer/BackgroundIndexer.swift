import CloudNotesStore
import Foundation
import Logging
import Synchronization

// MARK: - Background indexing

/// Indexes imported and long memos while the client is quiet, a small chunk at a time, so that an
/// interactive write never waits for more than one chunk.
final class BackgroundIndexer: Sendable {
    /// How long the client must have been quiet before a chunk is indexed.
    static let quietPeriod: Duration = .milliseconds(300)

    private let store: MemoStore
    private let bulkWork: BulkWork
    private let logger: Logger
    private let lastActivity = Mutex(ContinuousClock.now)
    private let task = Mutex<Task<Void, Never>?>(nil)

    init(store: MemoStore, bulkWork: BulkWork, logger: Logger) {
        self.store = store
        self.bulkWork = bulkWork
        self.logger = logger
    }

    /// Notes that a message arrived: indexing waits for the next quiet period.
    func noteActivity() {
        lastActivity.withLock { $0 = .now }
    }

    func start() {
        let newTask = Task.detached(priority: .utility) { [self] in await run() }
        task.withLock { $0 = newTask }
    }

    func stop() {
        task.withLock { $0?.cancel() }
    }

    private func run() async {
        var indexedSinceIdle = 0
        while !Task.isCancelled {
            let quietFor = ContinuousClock.now - lastActivity.withLock { $0 }
            if quietFor < Self.quietPeriod {
                try? await Task.sleep(for: Self.quietPeriod - quietFor)
                continue
            }
            if bulkWork.isUnderWay {
                try? await Task.sleep(for: Self.quietPeriod)
                continue
            }
            let store = store
            let indexed = (try? await BlockingWork.run { _ in try store.indexPendingMemos() }) ?? 0
            if indexed > 0 {
                indexedSinceIdle += indexed
                continue
            }
            if indexedSinceIdle > 0 {
                logger.debug("indexed \(indexedSinceIdle) memos in the background")
                indexedSinceIdle = 0
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
