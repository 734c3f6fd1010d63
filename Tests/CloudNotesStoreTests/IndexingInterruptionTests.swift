import Foundation
import GRDB
import Synchronization
import Testing

@testable import CloudNotesStore

@Suite("Interrupting an indexing chunk")
struct IndexingInterruptionTests {
    /// 2,000 memos of about 2 KB: a chunk takes 500 of them (the most one takes), a tenth of a second or more.
    private func storeWithPendingMemos() throws -> (MemoStore, [String]) {
        let store = try MemoStore(path: temporaryStorePath())
        let texts = (0..<2000).map { index in
            "memo \(index)\n" + String(repeating: "다람쥐 헌 쳇바퀴에 타고파 quick brown fox \(index) ", count: 40)
        }
        _ = try store.importMemos(texts.enumerated().map { MemoStore.NewMemo(text: $1, modifiedAt: Int64($0)) })
        return (store, texts)
    }

    @Test("a chunk interrupted from another thread throws cancelled, changes nothing, and the next chunk indexes it")
    func interruptedChunkRollsBack() throws {
        let (store, _) = try storeWithPendingMemos()
        let interruption = IndexingInterruption()
        // A chunk on a thread of its own, as the server runs it (`BlockingWork`), interrupted once seen
        // running. A chunk that ends before the interruption is seen running is left to end, and the
        // next one is tried.
        var interrupted = false
        for _ in 0..<4 where !interrupted {
            let waiting = try unindexedCount(store)
            let outcome = Mutex<Result<Int, any Error>?>(nil)
            Thread.detachNewThread {
                let result = Result { try store.indexPendingMemos(byteBudget: 64 << 20, interruption: interruption) }
                outcome.withLock { $0 = result }
            }
            while !interruption.isArmed, outcome.withLock({ $0 == nil }) { usleep(50) }
            interruption.interrupt()
            while outcome.withLock({ $0 == nil }) { usleep(1000) }
            guard case .failure(let error) = try #require(outcome.withLock { $0 }) else { continue }
            #expect(error as? StoreError == .cancelled)
            #expect(!interruption.isArmed)
            #expect(try unindexedCount(store) == waiting)
            interrupted = true
        }
        #expect(interrupted)
        // The connection is not left interrupted: the next write and the next chunks go through.
        let memo = try store.create(text: "written after the interruption", now: 5000, filter: nil).memo
        #expect(memo.version == 1)
        #expect(try store.count(filter: SearchFilter("after the interruption")) == 1)
        while try store.indexPendingMemos(interruption: interruption) > 0 {}
        #expect(try unindexedCount(store) == 0)
        #expect(try store.count(filter: SearchFilter("quick brown fox 1999 ")) == 1)
        try store.writer.write { db in
            try db.execute(sql: "INSERT INTO memo_fts(memo_fts, rank) VALUES ('integrity-check', 1)")
        }
        #expect(try store.integrityCheck() == "ok")
    }

    @Test("an interruption while no chunk runs reaches nothing that starts later")
    func interruptionBetweenChunks() throws {
        let (store, _) = try storeWithPendingMemos()
        let interruption = IndexingInterruption()
        interruption.interrupt()
        let memo = try store.create(text: "a write after it", now: 5000, filter: nil).memo
        interruption.interrupt()
        _ = try store.update(id: memo.id, text: "a write after it, changed", baseVersion: 1, now: 5001, filter: nil)
        interruption.interrupt()
        let waiting = try unindexedCount(store)
        #expect(try store.indexPendingMemos(byteBudget: 64 << 20, interruption: interruption) == 500)
        #expect(try unindexedCount(store) == waiting - 500)
    }

    private func unindexedCount(_ store: MemoStore) throws -> Int {
        try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE indexed = 0") ?? 0 }
    }
}
