import CloudNotesStore
import Foundation
import Logging
import Synchronization

// MARK: - Background indexing

/// Indexes imported and long memos while the client is quiet, a small chunk at a time; a message that
/// arrives during a chunk stops it (`IndexingInterruption`), so that the request it carries does not wait.
final class BackgroundIndexer: Sendable {
    /// How long the client must have been quiet before a chunk is indexed.
    static let quietPeriod: Duration = .milliseconds(300)

    /// The text a chunk indexes, at first and after an interruption, and at most. FTS5 writes each
    /// transaction's terms as a new segment and merges segments four at a time, writing the index again
    /// at each level: an import indexed in small chunks was written many times over (bench/FINDINGS.md).
    /// So the chunk doubles after each one that ran to its end, while the client stays quiet, and starts
    /// small again after a message stopped one, so that a client that types loses little to a stopped
    /// chunk. At most what the index keeps in memory until the commit (migration v10's `hashsize`).
    static let chunkBytes = (first: 64 * 1024, most: 2 << 20)

    private let store: MemoStore
    private let bulkWork: BulkWork
    private let logger: Logger
    private let lastActivity = Mutex(ContinuousClock.now)
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let interruption: IndexingInterruption

    init(store: MemoStore, bulkWork: BulkWork, logger: Logger, interruption: IndexingInterruption = IndexingInterruption()) {
        self.store = store
        self.bulkWork = bulkWork
        self.logger = logger
        self.interruption = interruption
    }

    /// Notes that a message arrived: the chunk under way stops, and indexing waits for the next quiet period.
    func noteActivity() {
        lastActivity.withLock { $0 = .now }
        interruption.interrupt()
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
        var chunkBytes = Self.chunkBytes.first
        while !Task.isCancelled {
            interruption.reset()  // before the look at the clock: a message after it stops the chunk
            let quietFor = ContinuousClock.now - lastActivity.withLock { $0 }
            if quietFor < Self.quietPeriod {
                try? await Task.sleep(for: Self.quietPeriod - quietFor)
                continue
            }
            if bulkWork.isUnderWay {
                try? await Task.sleep(for: Self.quietPeriod)
                continue
            }
            let (store, interruption, budget) = (store, interruption, chunkBytes)
            let indexed: Int
            do {
                indexed = try await BlockingWork.run { _ in try store.indexPendingMemos(byteBudget: budget, interruption: interruption) }
            } catch StoreError.cancelled {
                chunkBytes = Self.chunkBytes.first
                continue  // a message arrived: the next quiet period starts from it
            } catch {
                indexed = 0
            }
            if indexed > 0 {
                indexedSinceIdle += indexed
                chunkBytes = min(chunkBytes * 2, Self.chunkBytes.most)
                continue
            }
            chunkBytes = Self.chunkBytes.first
            if indexedSinceIdle > 0 {
                logger.debug("indexed \(indexedSinceIdle) memos in the background")
                indexedSinceIdle = 0
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}
