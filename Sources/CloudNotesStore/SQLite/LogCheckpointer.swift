import Foundation
import GRDB
import GRDBSQLite
import Synchronization

// MARK: - Checkpoints off the request path

/// Copies the write-ahead log back into the store's file on a thread of its own, so that no commit
/// waits for it.
///
/// SQLite's own rule checkpoints inside the commit that takes the log past 1,000 pages: that commit
/// copies them into the file and waits for two `fsync`s, which made the slowest keystrokes of typing
/// in a long memo. Here a commit only looks at the log's length: once
/// `Limits.backgroundPages` more pages than the last checkpoint copied, it asks a second connection,
/// on a queue of its own, for a passive checkpoint, which never blocks the writer or a reader.
///
/// The log starts again from its first page only at a commit that finds all of it copied: after the
/// first pause in typing. A writer that never pauses (a benchmark, an import) or a reader that holds an
/// old snapshot keeps it growing, so a commit that takes it past `Limits.inlinePages` checkpoints
/// itself, as SQLite would, copying what the background has not; unless the commit is a writer's last
/// for a while, or comes while an import runs (see `leavingCheckpointsToBackground`): an import copies
/// the log itself between its chunks, past `Limits.importPages`.
///
/// A checkpoint on a connection of its own while the writer commits is the setting of SQLite's WAL-reset
/// race, which loses committed pages: the store's VFS gives every checkpoint and every restart of the
/// log its turn (see `CheckpointTurns.c` in `CSQLiteLogWrites`).
final class LogCheckpointer: Sendable {
    /// When a commit asks for a checkpoint, in pages of the log.
    struct Limits: Sendable {
        /// Past this, a checkpoint in the background.
        var backgroundPages: Int32
        /// Past this, the commit checkpoints itself.
        var inlinePages: Int32
        /// Past this, an import under way checkpoints between its chunks (and no commit does).
        ///
        /// A checkpoint after which the log can start again must copy all of it while nobody writes: the
        /// importing thread waits for the copy and its two `fsync`s, which the background's checkpoints
        /// cannot spare it, since the import keeps adding to the log. At every 10,000 pages, as other
        /// writers do, those waits were much of an import's time. The benchmark's import of 100,000 memos
        /// logs just under this bound (256 MiB of 4 KiB pages); a larger import waits once every 256 MiB.
        /// The log's file is cut back afterwards (`keptLogBytes`).
        var importPages: Int32 = 65_536
        /// The most of the log's file kept when the log starts again: an import's log (up to
        /// `importPages`, then its last transaction's, a page for every few memos) otherwise kept its
        /// file that size for good. More than `inlinePages`, so that ordinary writing never cuts it and
        /// grows it again.
        var keptLogBytes: Int64 = 64 << 20

        /// SQLite's default for the background; 40 MB of 4 KB pages before a commit does it itself; 256 MiB
        /// during an import.
        static let standard = Limits(backgroundPages: 1000, inlinePages: 10_000)
    }

    let path: String
    let limits: Limits
    private let queue = DispatchQueue(label: "cloudnotes.checkpoint", qos: .utility)
    private let state = Mutex(State())

    private struct State: ~Copyable {
        /// The checkpointing connection, opened at the first checkpoint.
        var connection: DatabaseQueue?
        /// A checkpoint is queued or running.
        var isQueued = false
        /// A commit left to the background came while a checkpoint was queued or running: another
        /// follows it.
        var wantsAnother = false
        /// How many writes (and imports) under way leave every checkpoint to the background.
        var leavingToBackground = 0
        /// How many of the log's pages the last checkpoint copied: the pages past it are the ones a
        /// checkpoint would copy now.
        var copied: Int32 = 0
        /// Checkpoints run in the background so far.
        var finished = 0
        /// The log's length after the last commit, in pages.
        var pages: Int32 = 0
    }

    init(path: String, limits: Limits = .standard) {
        self.path = path
        self.limits = limits
    }

    /// Checkpoints run in the background so far.
    var finishedCheckpoints: Int { state.withLock { $0.finished } }

    /// The log's length after the last commit, in pages.
    var pagesInLog: Int32 { state.withLock { $0.pages } }

    // MARK: - After each commit

    /// Makes SQLite tell this checkpointer the log's size after each commit of `db`, instead of
    /// checkpointing at 1,000 pages itself (the two share one hook).
    ///
    /// The hook holds this object unretained: the connection's owner keeps it alive (the pool's
    /// `prepareDatabase` closure captures it, as the import connection's does).
    func watchCommits(of db: Database) {
        _ = sqlite3_wal_hook(db.sqliteConnection, { context, connection, name, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<LogCheckpointer>.fromOpaque(context).takeUnretainedValue()
                .commitDidLeaveLog(pages: pages, connection: connection, name: name)
            return SQLITE_OK  // an error here would fail a statement whose commit has happened
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// What a commit does about the log it left.
    private enum Next {
        case nothing, queueCheckpoint, checkpointHere
    }

    private func commitDidLeaveLog(pages: Int32, connection: OpaquePointer?, name: UnsafePointer<CChar>?) {
        // One lock per commit: this runs on every keystroke.
        let next: Next = state.withLock { state in
            state.pages = pages
            let leftToBackground = pages >= limits.inlinePages && state.leavingToBackground > 0
            if pages >= limits.inlinePages, !leftToBackground { return .checkpointHere }
            // The log starts again from its first page once a checkpoint has copied all of it.
            if pages < state.copied { state.copied = 0 }
            guard pages - state.copied >= limits.backgroundPages else { return .nothing }
            guard !state.isQueued else {
                // A checkpoint under way may have started before this commit, and a commit left to the
                // background may be a writer's last for a while: no later commit would ask again. (Other
                // commits do not: during a burst of keystrokes, each would have the checkpoints run back
                // to back, each with its `fsync`.)
                if leftToBackground { state.wantsAnother = true }
                return .nothing
            }
            state.isQueued = true
            return .queueCheckpoint
        }
        switch next {
        case .nothing: break
        case .queueCheckpoint: queue.async { self.checkpointNow() }
        case .checkpointHere: _ = sqlite3_wal_checkpoint_v2(connection, name, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
        }
    }

    // MARK: - In the background

    /// Checkpoints on this checkpointer's connection (on its queue; tests call it to stand for a pause).
    func checkpointNow() {
        // The log's writer goes on meanwhile: the pages it adds are left for the next checkpoint, which
        // a commit queues once they are `Limits.backgroundPages` more. A failure (another process
        // checkpointing, a full disk) leaves them to that one, or to the commit that reaches
        // `Limits.inlinePages`.
        let copied = (try? connection()).flatMap(copyLog(on:))
        let again = state.withLock { state in
            if let copied {
                state.copied = copied
                state.finished += 1
            }
            state.isQueued = state.wantsAnother
            state.wantsAnother = false
            return state.isQueued
        }
        if again { queue.async { self.checkpointNow() } }
    }

    /// Checkpoints on `connection` if the log is past `Limits.importPages`: for an import, whose commits
    /// leave their checkpoints to the background (`leavingCheckpointsToBackground`), between its
    /// chunks, outside its turn at the write lock, so that no other write waits for the copy.
    func checkpointIfPastImportLimit(on connection: any DatabaseWriter) {
        guard state.withLock({ $0.pages >= limits.importPages }) else { return }
        // After the checkpoint under way, if any, and before the next: during an import the background
        // runs them back to back, and a passive checkpoint gives up while another runs, so the log would
        // never start again.
        guard let copied = exclusively({ copyLog(on: connection) }) else { return }
        state.withLock { $0.copied = copied }
    }

    /// A passive checkpoint on `connection`: how many of the log's pages are now copied, or nil when it
    /// could not run (another checkpoint under way, the store's file gone).
    private func copyLog(on connection: any DatabaseWriter) -> Int32? {
        let copied = try? connection.writeWithoutTransaction { db in try db.checkpoint(.passive).checkpointedFrameCount }
        return copied.map { Int32(clamping: $0) }
    }

    /// Runs `body`, during which every commit leaves its checkpoint to the background however long the
    /// log grows: for a writer's last commit of a while, long enough to take the log past
    /// `Limits.inlinePages`, whose caller should not wait for the copy (an import's last transaction,
    /// which logs a page for every few memos: copying it inline stalled the import's answer); and
    /// for a whole import, which bounds the log itself (`checkpointIfPastImportLimit`), and during which
    /// a keystroke's commit would otherwise find the log past `Limits.inlinePages`, and copy it.
    func leavingCheckpointsToBackground<T>(_ body: () throws -> T) rethrows -> T {
        state.withLock { $0.leavingToBackground += 1 }
        defer { state.withLock { $0.leavingToBackground -= 1 } }
        return try body()
    }

    /// The checkpointing connection, opened at the first checkpoint (not with the store: starting up
    /// costs no more than before).
    func connection() throws -> DatabaseQueue {
        if let connection = state.withLock({ $0.connection }) { return connection }
        // Opening would create a file that is gone (a queued checkpoint after the store's folder was removed).
        guard access(path, F_OK) == 0 else { throw StoreError.writeFailed("the store's file is gone") }
        var configuration = Configuration()
        configuration.label = "cloudnotes.checkpoint"
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        state.withLock { $0.connection = connection }
        return connection
    }

    /// Runs `body` while no background checkpoint runs or starts (the exit's own checkpoint, which
    /// one would make give up), after those already queued.
    func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        try queue.sync(execute: body)
    }
}
