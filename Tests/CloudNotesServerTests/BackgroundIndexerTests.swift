import CloudNotesTestSupport
import Foundation
import GRDB
import Logging
import Synchronization
import Testing

@testable import CloudNotesServer
@testable import CloudNotesStore

@Suite("Background indexer")
struct BackgroundIndexerTests {
    @Test("stays out of the way of a sync or an import, then indexes what they left")
    func waitsForBulkWork() async throws {
        let store = try MemoStore()
        _ = try store.importMemos((0..<20).map { MemoStore.NewMemo(text: "memo \($0)\nto index", modifiedAt: Int64($0)) })
        #expect(try unindexedCount(store) == 20)
        let bulkWork = BulkWork()
        let indexer = BackgroundIndexer(store: store, bulkWork: bulkWork, logger: Logger(label: "test"))
        indexer.start()
        defer { indexer.stop() }
        try await bulkWork.run {
            #expect(bulkWork.isUnderWay)
            // Four quiet periods: time enough for the indexer to index all twenty in one chunk.
            try await Task.sleep(for: BackgroundIndexer.quietPeriod * 4)
            #expect(try unindexedCount(store) == 20)
        }
        #expect(!bulkWork.isUnderWay)
        let deadline = ContinuousClock.now + .seconds(20)
        while try unindexedCount(store) > 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try unindexedCount(store) == 0)
    }

    @Test("bulk work counts while any of it runs, also when it throws")
    func bulkWorkCounts() async throws {
        let bulkWork = BulkWork()
        struct Failure: Error {}
        await #expect(throws: Failure.self) {
            try await bulkWork.run { () async throws(Failure) in
                await bulkWork.run { #expect(bulkWork.isUnderWay) }
                #expect(bulkWork.isUnderWay)
                throw Failure()
            }
        }
        #expect(!bulkWork.isUnderWay)
    }

    @Test("a message that arrives during a chunk stops it; the indexer starts again once the client is quiet")
    func messageInterruptsChunk() async throws {
        let store = try MemoStore(path: temporaryStorePath())
        let text = String(repeating: "다람쥐 헌 쳇바퀴에 타고파 quick brown fox ", count: 40)
        _ = try store.importMemos((0..<2000).map { MemoStore.NewMemo(text: "memo \($0)\n" + text, modifiedAt: Int64($0)) })
        // A message arrives as the first chunk starts. The second waits, as it starts, until the test
        // has counted what the first left.
        let indexerBox = Mutex<BackgroundIndexer?>(nil)
        let chunksStarted = Atomic(0)
        let counted = DispatchSemaphore(value: 0)
        let interruption = IndexingInterruption(didStartChunk: {
            switch chunksStarted.add(1, ordering: .sequentiallyConsistent).newValue {
            case 1: indexerBox.withLock { $0 }?.noteActivity()
            case 2: counted.wait()
            default: break
            }
        })
        let indexer = BackgroundIndexer(store: store, bulkWork: BulkWork(), logger: Logger(label: "test"),
                                        interruption: interruption)
        indexerBox.withLock { $0 = indexer }
        indexer.start()
        defer { indexer.stop() }
        try #expect(await waitUntil(timeout: .seconds(60)) { chunksStarted.load(ordering: .sequentiallyConsistent) >= 2 })
        #expect(try unindexedCount(store) == 2000)  // the first chunk rolled back, not committed
        counted.signal()
        try #expect(await waitUntil(timeout: .seconds(60)) { try unindexedCount(store) == 0 })
    }

    private func unindexedCount(_ store: MemoStore) throws -> Int {
        try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE indexed = 0") ?? 0 }
    }
}
