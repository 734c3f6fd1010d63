import CloudNotesTestSupport
import Testing

@testable import CloudNotesStore

extension LogCheckpointer.Limits {
    /// No checkpoint at all: the log only grows, and what a commit writes to it can be counted.
    static let never = Self(backgroundPages: .max, inlinePages: .max)
}

/// A store on a new file whose write-ahead log is checkpointed at `limits`, its checkpointer and its path.
func storeOnFile(checkpointing limits: LogCheckpointer.Limits = .never) throws -> (MemoStore, LogCheckpointer, path: String) {
    let path = temporaryStorePath()
    let store = try MemoStore(path: path, durability: .committed, readOnly: false, discardingAbandonedImports: true,
                              logLimits: limits)
    return (store, try #require(store.checkpointer), path)
}

/// A store in memory holding a memo of each of `texts`, made at times 1, 2, …, all in the full-text index.
func indexedStore(_ texts: String...) throws -> (MemoStore, [StoredMemo]) {
    let store = try MemoStore()
    let memos = try texts.enumerated().map { try store.create(text: $1, now: Int64($0 + 1), filter: nil).memo }
    try store.indexEverything()
    return (store, memos)
}

extension MemoStore {
    /// Puts every memo that waits for the full-text index in it, as the background indexer does.
    func indexEverything() throws {
        while try indexPendingMemos() > 0 {}
    }
}
