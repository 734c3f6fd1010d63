import CloudNotesTestSupport
import Foundation
import Testing

@testable import CloudNotesStore

/// The write-ahead log is checkpointed in the background, so that no commit waits for it.
@Suite("Checkpoints of the write-ahead log")
struct LogCheckpointerTests {
    /// Writes `count` memos of 12 KB, each in its own commit.
    private func write(_ count: Int, to store: MemoStore) throws {
        for i in 0..<count {
            _ = try store.create(text: "memo \(i)\n" + String(repeating: "회의 notes \(i) ", count: 800), now: Int64(i), filter: nil)
        }
    }

    /// Waits for the checkpoints queued so far: those the store's opening asked for (its migrations
    /// log more than 50 pages), and the one a checkpoint under way queues after it.
    private func settle(_ checkpointer: LogCheckpointer) {
        checkpointer.exclusively {}
        checkpointer.exclusively {}
    }

    /// The size of the store's file: in WAL mode, only a checkpoint writes it.
    private func fileSize(_ path: String) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }

    @Test("commits never checkpoint below the inline limit, not even at SQLite's own 1,000 pages")
    func commitsDoNotCheckpoint() throws {
        let (store, checkpointer, path) = try storeOnFile(checkpointing: .never)
        let before = try fileSize(path)
        try write(400, to: store)
        #expect(checkpointer.pagesInLog > 1000)
        #expect(try fileSize(path) == before)
    }

    @Test("a commit past the background limit has the log checkpointed on another connection")
    func checkpointsInTheBackground() throws {
        let (store, checkpointer, path) = try storeOnFile(checkpointing: .init(backgroundPages: 50, inlinePages: .max))
        settle(checkpointer)
        let before = try fileSize(path), finished = checkpointer.finishedCheckpoints
        // The checkpoints' queue is held meanwhile. A checkpoint that ran during the commits would copy
        // only those before it, and by design the commits that find it under way queue no other: on a
        // loaded machine, one that started at the first commit past 50 pages left most of them in the log.
        try checkpointer.exclusively {
            try write(60, to: store)
            #expect(try fileSize(path) == before, "no commit checkpointed itself")
        }
        settle(checkpointer)
        #expect(checkpointer.finishedCheckpoints == finished + 1, "one checkpoint, queued by the first commit past 50 pages")
        #expect(try fileSize(path) > before + 500 * 1024)
        try write(1, to: store)
        #expect(checkpointer.pagesInLog < 20, "the log was copied whole, and started again")
    }

    @Test("once a checkpoint has copied the whole log, as in a pause between keystrokes, the next commit starts it again")
    func logStartsAgainAfterAPause() throws {
        let (store, checkpointer, _) = try storeOnFile(checkpointing: .never)
        try write(60, to: store)
        let long = checkpointer.pagesInLog
        checkpointer.exclusively { checkpointer.checkpointNow() }
        try write(1, to: store)
        #expect(long > 500)
        #expect(checkpointer.pagesInLog < 20, "one memo's pages, not the whole log's")
    }

    @Test("a commit that takes the log past the inline limit checkpoints it itself")
    func inlineLimit() throws {
        let (store, checkpointer, path) = try storeOnFile(checkpointing: .init(backgroundPages: .max, inlinePages: 50))
        let before = try fileSize(path)
        var longest: Int32 = 0
        for _ in 0..<60 {
            try write(1, to: store)
            longest = max(longest, checkpointer.pagesInLog)
        }
        #expect(checkpointer.finishedCheckpoints == 0)
        #expect(longest < 2 * 50, "the log started again after each checkpoint (60 memos take 700 pages)")
        #expect(try fileSize(path) > before)
    }

    @Test("commits that leave checkpoints to the background never checkpoint themselves; the background copies all they wrote")
    func leavingCheckpointsToBackground() async throws {
        let (store, checkpointer, path) = try storeOnFile(checkpointing: .init(backgroundPages: 50, inlinePages: 100))
        settle(checkpointer)
        let before = try fileSize(path), finished = checkpointer.finishedCheckpoints
        // The checkpoints' queue is held meanwhile: only a commit could have checkpointed.
        try checkpointer.exclusively {
            try checkpointer.leavingCheckpointsToBackground { try write(60, to: store) }
            #expect(checkpointer.pagesInLog > 500)
            #expect(try fileSize(path) == before, "no commit checkpointed itself past the inline limit")
        }
        for _ in 0..<500 where checkpointer.finishedCheckpoints == finished {
            try await Task.sleep(for: .milliseconds(10))
        }
        settle(checkpointer)
        #expect(try fileSize(path) > before + 500 * 1024)
        try write(1, to: store)
        #expect(checkpointer.pagesInLog < 20, "the log was copied whole, and started again")
    }

    @Test("a commit left to the background while a checkpoint is queued or running gets another one after it; other commits do not")
    func anotherCheckpointAfterTheOneUnderWay() async throws {
        let (store, checkpointer, _) = try storeOnFile(checkpointing: .init(backgroundPages: 50, inlinePages: 100))
        for leftToBackground in [false, true] {
            settle(checkpointer)
            let finished = checkpointer.finishedCheckpoints
            try checkpointer.exclusively {
                // About 12 pages a memo. The first commit past 50 pages queues a checkpoint (the queue is
                // held meanwhile), and those after it find it queued; past 100, a commit that is not left
                // to the background checkpoints itself.
                if leftToBackground {
                    try checkpointer.leavingCheckpointsToBackground { try write(60, to: store) }
                } else {
                    try write(60, to: store)
                }
            }
            for _ in 0..<500 where checkpointer.finishedCheckpoints < finished + (leftToBackground ? 2 : 1) {
                try await Task.sleep(for: .milliseconds(10))
            }
            settle(checkpointer)
            #expect(checkpointer.finishedCheckpoints == finished + (leftToBackground ? 2 : 1), "left to the background: \(leftToBackground)")
        }
    }

    @Test("an import's chunks leave the log's copy to the import, between its chunks: past the import's limit it is copied, by no commit and no background checkpoint")
    func importCopiesTheLogBetweenItsChunks() throws {
        let (store, checkpointer, path) = try storeOnFile(checkpointing: .init(backgroundPages: .max, inlinePages: .max, importPages: 50))
        let before = try fileSize(path)
        let session = try ImportSession(store: store)
        // About 150 pages of text, in one chunk: one commit, past the import's limit.
        try session.add((0..<300).map { MemoStore.NewMemo(text: "memo \($0)\n" + String(repeating: "imported ", count: 200), modifiedAt: 1) })
        #expect(checkpointer.finishedCheckpoints == 0)
        #expect(try fileSize(path) > before + 100 * 4096, "copied after the chunk")
        try session.finish()
    }

    @Test("while an import runs, no commit copies the log, not even one past the inline limit between its chunks (a keystroke's); after it, such a commit does")
    func noCommitCopiesTheLogDuringAnImport() throws {
        let (store, checkpointer, path) = try storeOnFile(checkpointing: .init(backgroundPages: .max, inlinePages: 50, importPages: .max))
        let before = try fileSize(path)
        var chunksLeft = 2
        _ = try store.importMemos(nextChunk: {
            // Between the chunks, as keystrokes would come: about 12 pages a memo, past the inline limit.
            try write(10, to: store)
            chunksLeft -= 1
            return chunksLeft < 0 ? [] : (0..<100).map { MemoStore.NewMemo(text: "imported \($0)", modifiedAt: 1) }
        })
        #expect(checkpointer.pagesInLog > 300)
        #expect(try fileSize(path) == before, "no commit copied the log during the import")
        try write(1, to: store)
        #expect(try fileSize(path) > before, "after the import, a commit past the inline limit copies it")
    }

    @Test("an import bounds the log itself while the background's checkpoints run back to back")
    func importBoundsTheLog() throws {
        let (store, checkpointer, _) = try storeOnFile(checkpointing: .init(backgroundPages: 20, inlinePages: .max, importPages: 100))
        var longest: Int32 = 0
        let chunk = (0..<100).map { MemoStore.NewMemo(text: "memo \($0)\n" + String(repeating: "imported ", count: 60), modifiedAt: 1) }
        var chunksLeft = 30
        _ = try store.importMemos(
            nextChunk: {
                chunksLeft -= 1
                return chunksLeft < 0 ? [] : chunk
            },
            didStore: { _ in longest = max(longest, checkpointer.pagesInLog) })
        // About 25 pages a chunk, 750 in all: the log starts again after each copy past 100 pages. A
        // passive checkpoint that gave up while the background's ran let it grow to 157-302 pages.
        #expect(longest < 100 + 40, "the longest log: \(longest) pages")
    }

    @Test("when the log starts again, its file is cut back to the limit kept")
    func logFileCutBack() throws {
        let (store, checkpointer, path) = try storeOnFile(checkpointing: .init(backgroundPages: .max, inlinePages: .max, keptLogBytes: 256 * 1024))
        try write(60, to: store)
        let long = try fileSize(path + "-wal")
        checkpointer.exclusively { checkpointer.checkpointNow() }
        try write(1, to: store)
        #expect(long > 2 * 1024 * 1024)
        #expect(try fileSize(path + "-wal") <= 256 * 1024)
    }
}
