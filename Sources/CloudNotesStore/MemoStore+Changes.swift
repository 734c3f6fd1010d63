import Foundation
import GRDB

// MARK: - Changes

/// A committed change to one memo and where it stood in the filtered list before and after.
public struct ListChange: Sendable {
    /// The memo as committed (a tombstone after a delete).
    public var memo: StoredMemo
    /// Its index in the list under the filter before the change; nil when it was not in the list.
    public var indexBefore: Int?
    /// Its index after the change; nil when it is not in the list any more.
    public var indexAfter: Int?
    /// False when the change turned out to change nothing (an update with the same text).
    public var changedAnything: Bool = true
    /// Other processes' changes that the split view had not yet caught up with, taken with this change:
    /// the client must hear of them first, since the indexes above count them.
    public var changesElsewhere: ChangesElsewhere?

    /// Whether the change also took other processes' changes.
    public var followsChangesElsewhere: Bool { changesElsewhere != nil }
}

extension MemoStore {
    /// Creates a memo with `text`.
    public func create(id: String = UUID().uuidString.lowercased(), text: String, now: Int64, filter: SearchFilter?) throws -> ListChange {
        let change = try write { db in
            var memo = StoredMemo(id: id, text: text, createdAt: now, modifiedAt: now, seq: try Self.nextSeq(db))
            memo.author = author.stored
            try memo.insert(db)
            try cacheInsert(memo, db)
            return try noting(ListChange(memo: memo, indexBefore: nil, indexAfter: try index(of: memo, filter: filter, db)), filter: filter, db)
        }
        rememberText(of: change.memo)
        return change
    }

    /// Replaces the text of memo `id`; with `baseVersion`, only if the memo is still at that version.
    public func update(id: String, text: String, baseVersion: Int64?, now: Int64, filter: SearchFilter?) throws -> ListChange {
        try update(id: id, baseVersion: baseVersion, now: now, filter: filter) { _ in text }
    }

    /// Replaces the text of memo `id` with what `newText` makes of the stored text, in the same
    /// transaction; with `baseVersion`, only if the memo is still at that version (checked first).
    /// An error thrown by `newText` refuses the change and comes out as it is.
    public func update(
        id: String, baseVersion: Int64?, now: Int64, filter: SearchFilter?, newText: (String) throws -> String
    ) throws -> ListChange {
        try withoutActuallyEscaping(newText) { newText in
            // A burst of one, and its only result.
            try self.update([TextUpdate(id: id, baseVersion: baseVersion, newText: newText)], now: now, filter: filter)[0].get()
        }
    }

    /// One change of text in a burst (see `update(_:now:filter:)`).
    public struct TextUpdate {
        public var id: String
        public var baseVersion: Int64?
        /// The new text, made from the stored one; what it throws refuses this change alone.
        public var newText: (String) throws -> String
        /// The number of the version whose text this change restores, instead of `newText`'s.
        public var restoring: Int64?

        public init(id: String, baseVersion: Int64?, newText: @escaping (String) throws -> String) {
            self.id = id
            self.baseVersion = baseVersion
            self.newText = newText
        }

        /// Restores version `number` of memo `id`: its text becomes the current one, as a change.
        public init(id: String, baseVersion: Int64?, restoring number: Int64) {
            self.init(id: id, baseVersion: baseVersion) { $0 }
            restoring = number
        }
    }

    /// Applies `updates` in order, each as `update` would alone, and commits them together: a burst of
    /// keystrokes costs one commit, not one each.
    ///
    /// Each gets its own result; a refused one (not found, conflict, an error of its `newText`) changes
    /// nothing and the next ones still apply. A failure of the store itself rolls back all of them.
    /// The results can be shorter than `updates`: the burst ends after a change that also took other
    /// processes' changes, so that the store, once this returns, is as it was right after that change.
    ///
    /// A run of changes to one memo writes its row once, as the run's last change left it: no other
    /// connection sees the row before the commit, and the changes before the last would be overwritten
    /// in the same transaction (half of a keystroke's cost, with its overflow pages and index entries,
    /// in a burst of typing). A list under a search filter reads the row to place it, so there each
    /// change is written as it is made.
    public func update(_ updates: [TextUpdate], now: Int64, filter: SearchFilter?) throws -> [Result<ListChange, any Error>] {
        let results = try write { db in
            var results: [Result<ListChange, any Error>] = []
            // The memo as the last change left it, for the next change of the same memo: not read back.
            var latest: StoredMemo?
            // Whether `latest` is still to be written.
            var latestUnwritten = false
            // The sequence number the last change took: the store's highest, whether written or not.
            var lastSeq: Int64?
            let writesLater = filter == nil && !holdsFilteredOrder
            for update in updates {
                do {
                    if let memo = latest, memo.id != update.id, latestUnwritten {
                        try memo.saveChange(db)
                        latestUnwritten = false
                    }
                    let stored = try latest?.id == update.id ? latest : Self.liveMemo(id: update.id, db, reusing: recentText.withLock { $0 })
                    let change = try applyUpdate(update, now: now, filter: filter, stored: stored, lastSeq: lastSeq,
                                                 writingLater: writesLater, db)
                    results.append(.success(change))
                    latest = change.memo
                    if change.changedAnything {
                        latestUnwritten = writesLater
                        lastSeq = change.memo.seq
                    }
                    if change.followsChangesElsewhere { break }
                } catch let error as DatabaseError {
                    throw error
                } catch {
                    results.append(.failure(error))
                }
            }
            if let latest, latestUnwritten { try latest.saveChange(db) }
            return results
        }
        if let last = results.compactMap({ try? $0.get() }).last { rememberText(of: last.memo) }
        return results
    }

    /// The change of `update` to `stored` (the memo as it is in this transaction), written unless
    /// `writingLater`: then the caller writes it, or a later change of the same memo. While it is not
    /// written, nothing here may read its row, which is as the run found it: positions come from the
    /// orders in memory or from counting the memos above its key, which its old row never is.
    ///
    /// A changed memo takes the store's next sequence number: one past `lastSeq`, the number the
    /// transaction's last change took (that change may not be written yet), else past the file's highest.
    private func applyUpdate(
        _ update: TextUpdate, now: Int64, filter: SearchFilter?, stored: StoredMemo?, lastSeq: Int64?, writingLater: Bool,
        _ db: Database
    ) throws -> ListChange {
        guard var memo = stored else { throw StoreError.memoNotFound(id: update.id) }
        if let baseVersion = update.baseVersion, baseVersion != memo.version { throw StoreError.versionConflict(current: memo) }
        var author = author
        let text: String
        if let number = update.restoring {
            text = try Self.version(localID: memo.storedLocalID, id: memo.id, number: number, db).text
            author = Author(kind: .restore, detail: author.detail)
        } else {
            text = try update.newText(memo.text)
        }
        let before = try index(of: memo, filter: filter, db)
        if memo.text.hasSameBytes(as: text) {
            return try noting(ListChange(memo: memo, indexBefore: before, indexAfter: before, changedAnything: false), filter: filter, db)
        }
        try keepVersion(of: memo, replacedBy: author, now: now, db)
        cacheRemove(memo)
        memo.setText(text)
        memo.author = author.stored
        // Never backwards: a memo that was edited is at least as new as it was.
        memo.modifiedAt = max(now, memo.modifiedAt)
        memo.version += 1
        memo.seq = try lastSeq.map { $0 + 1 } ?? Self.nextSeq(db)
        if !writingLater { try memo.saveChange(db) }
        try cacheInsert(memo, db)
        return try noting(ListChange(memo: memo, indexBefore: before, indexAfter: try index(of: memo, filter: filter, db)), filter: filter, db)
    }

    /// Deletes memo `id`, leaving a tombstone that keeps its text in the trash (a blank memo with no
    /// versions leaves nothing to bring back, and skips the trash); with `onlyIfBlank`, only a memo
    /// whose text is blank.
    ///
    /// Returns nil when `onlyIfBlank` kept the memo.
    public func delete(id: String, now: Int64, filter: SearchFilter?, onlyIfBlank: Bool = false) throws -> ListChange? {
        try write { db in
            guard var memo = try Self.liveMemo(id: id, db) else {
                if onlyIfBlank { return nil }
                throw StoreError.memoNotFound(id: id)
            }
            if onlyIfBlank, !memo.text.isBlank { return nil }
            let before = try index(of: memo, filter: filter, db)
            cacheRemove(memo)
            memo.deleted = true
            memo.indexed = false  // a tombstone leaves the full-text index
            memo.modifiedAt = max(now, memo.modifiedAt)
            memo.trashedAt = try Self.isWorthTrashing(memo, db) ? now : nil
            memo.version += 1
            memo.seq = try Self.nextSeq(db)
            try memo.saveChange(db)
            return try noting(ListChange(memo: memo, indexBefore: before, indexAfter: nil), filter: filter, db)
        }
    }

    /// A memo to import: its exact text and its timestamp in milliseconds.
    ///
    /// Its list columns are derived when it is made, on whichever thread reads the import, rather than
    /// in the transaction that writes it.
    public struct NewMemo: Sendable {
        public let text: String
        public let modifiedAt: Int64
        let title: String
        let preview: String
        public init(text: String, modifiedAt: Int64) {
            self.text = text
            self.modifiedAt = modifiedAt
            (title, preview) = StoredMemo.listColumns(of: text)
        }
    }

    /// `change`, marked when it follows changes of other processes that the split view has not caught
    /// up with. Taken once the change succeeded, so a refused change leaves them for the next catch-up.
    func noting(_ change: ListChange, filter: SearchFilter?, _ db: Database) throws -> ListChange {
        var change = change
        // The orders followed the file at the start of the transaction (`write`), which no other commit
        // can land in: what they followed and the split view did not hear of came before this change.
        change.changesElsewhere = try takeFollowed(filter: filter, db)
        if change.changedAnything { try countVisibleChange(db) }
        if change.changedAnything { noteSeen(seq: change.memo.seq) }
        return change
    }

    /// Runs `body` in a write transaction, turning disk failures into `StoreError.writeFailed`; with
    /// `leavingCheckpointsToBackground`, its commit never checkpoints the log itself (see
    /// `LogCheckpointer.leavingCheckpointsToBackground`).
    ///
    /// The list orders in memory follow the transaction; if it fails, they are rebuilt from the file.
    func write<T>(leavingCheckpointsToBackground leaving: Bool = false, _ body: (Database) throws -> T) throws -> T {
        try inWriteTurn(leavingCheckpointsToBackground: leaving) {
            try writer.write { db in
                try followChangesElsewhere(db)
                return try body(db)
            }
        }
    }

    /// Runs `body` in a write transaction of `connection`, another connection of this store's file, in
    /// turn with the writer's, as `write(leavingCheckpointsToBackground:_:)` does: for writes that no
    /// list shows until the writer's own (an import's chunks).
    func write<T>(through connection: DatabaseQueue, leavingCheckpointsToBackground leaving: Bool = false,
                  _ body: (Database) throws -> T) throws -> T {
        try inWriteTurn(leavingCheckpointsToBackground: leaving) { try connection.write(body) }
    }

    /// Runs `write` in its turn at the file's write lock (its commits leaving checkpoints to the
    /// background if `leaving`: raised inside the turn, so that no other write's commit is left so, but
    /// during an import, see `importMemos`), turning SQLite's failures into `StoreError.writeFailed`.
    private func inWriteTurn<T>(leavingCheckpointsToBackground leaving: Bool, _ write: () throws -> T) throws -> T {
        // Refused before SQLite is asked: even a failed write transaction makes it drop its cache.
        if isReadOnly { throw StoreError.writeFailed("the store is read-only") }
        do {
            return try writeTurns.take {
                guard leaving, let checkpointer else { return try write() }
                return try checkpointer.leavingCheckpointsToBackground(write)
            }
        } catch let error as StoreError {
            // A change refuses (not found, conflict, cancelled) before it touches the orders in memory.
            throw error
        } catch let error as DatabaseError {
            // SQLite failed, possibly after the orders followed a write that is now rolled back, and
            // after the change took other processes' changes that the client will now not hear of.
            cache.invalidate()
            forgetCaughtUp()
            throw StoreError.writeFailed(error)
        }
    }
}
