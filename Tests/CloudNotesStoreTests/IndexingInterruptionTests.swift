import CloudNotesTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import CloudNotesStore

@Suite("Interrupting an indexing chunk")
struct IndexingInterruptionTests {
    /// A store of 1,000 memos of about 8 KB waiting for the indexer: a chunk of 4 MB takes 494 of them,
    /// and its update takes a good part of a second.
    private func storeWithPendingMemos() throws -> MemoStore {
        let store = try MemoStore(path: temporaryStorePath())
        let text = String(repeating: "다람쥐 헌 쳇바퀴에 타고파 quick brown fox ", count: 160)
        _ = try store.importMemos((0..<1000).map { MemoStore.NewMemo(text: "memo \($0)\n" + text, modifiedAt: Int64($0)) })
        return store
    }

    @Test("a chunk interrupted during its update throws cancelled, changes nothing, and leaves the connection as it was")
    func interruptedDuringUpdate() async throws {
        let store = try storeWithPendingMemos()
        // 50 ms into the first chunk: past its choice of memos, inside its update.
        let box = Mutex<IndexingInterruption?>(nil)
        let chunksStarted = Atomic(0)
        let interruption = IndexingInterruption(didStartChunk: {
            guard chunksStarted.add(1, ordering: .relaxed).newValue == 1 else { return }
            Thread.detachNewThread {
                usleep(50_000)
                box.withLock { $0 }?.interrupt()
            }
        })
        box.withLock { $0 = interruption }
        #expect(throws: StoreError.cancelled) { try store.indexPendingMemos(byteBudget: 64 << 20, interruption: interruption) }
        #expect(try unindexedCount(store) == 1000)
        // The interruption is still asked for, and the progress handler is gone: a write outside a
        // chunk, which indexes its memo as it goes, is not stopped.
        let memo = try store.create(text: "written after the interruption", now: 5000, filter: nil).memo
        #expect(try store.count(filter: SearchFilter("after the interruption")) == 1)
        _ = try store.update(id: memo.id, text: "changed after the interruption", baseVersion: 1, now: 5001, filter: nil)
        interruption.reset()
        while try store.indexPendingMemos(byteBudget: 64 << 20, interruption: interruption) > 0 {}
        #expect(try unindexedCount(store) == 0)
        #expect(try store.count(filter: SearchFilter("memo 999\n다람쥐")) == 1)
        try await store.writer.write { db in
            try db.execute(sql: "INSERT INTO memo_fts(memo_fts, rank) VALUES ('integrity-check', 1)")
        }
        #expect(try store.integrityCheck() == "ok")
    }

    @Test("an interruption asked for before a chunk starts stops it, until the indexer resets it")
    func interruptionBeforeChunk() throws {
        let store = try storeWithPendingMemos()
        let interruption = IndexingInterruption()
        interruption.interrupt()
        #expect(throws: StoreError.cancelled) { try store.indexPendingMemos(interruption: interruption) }
        #expect(try unindexedCount(store) == 1000)
        interruption.reset()
        #expect(try store.indexPendingMemos(byteBudget: 4 << 20, interruption: interruption) == 494)
        #expect(try unindexedCount(store) == 506)
    }

    @Test("a chunk takes as many short memos as fill its budget, and the index keeps their entries in memory until the commit")
    func chunksFillTheirBudget() throws {
        let store = try MemoStore(path: temporaryStorePath())
        _ = try store.importMemos((0..<3000).map { MemoStore.NewMemo(text: "short memo \($0)", modifiedAt: Int64($0)) })
        #expect(try store.indexPendingMemos(byteBudget: 2 << 20) == 3000)
        #expect(try unindexedCount(store) == 0)
        #expect(try store.count(filter: SearchFilter("memo 2999")) == 1)
        let hashSize = try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT v FROM memo_fts_config WHERE k = 'hashsize'") }
        #expect(hashSize == 8 << 20)
    }

    private func unindexedCount(_ store: MemoStore) throws -> Int {
        try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE indexed = 0") ?? 0 }
    }
}
