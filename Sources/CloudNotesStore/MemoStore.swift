import CSQLiteLogWrites
import Foundation
import GRDB
import Synchronization

// MARK: - Memo store

/// The CloudNotes database: one SQLite file in WAL mode, owning its schema migrations.
///
/// Every change runs in one write transaction that also computes where the memo stood in the list
/// before and after, so the caller's notifications describe exactly what was committed. A method
/// that returns has committed. The list's order is also kept in memory (`ListCache`), so positions
/// and pages cost no scan of the table.
public final class MemoStore: Sendable {
    let writer: any DatabaseWriter
    /// The list orders in memory (see `ListCache`).
    let cache = ListCache()
    /// Where the last catch-up with other processes' changes left the split view (see `takeChangesElsewhere()`).
    let caughtUp = Mutex(CaughtUp())
    /// The text of the memo changed last (see `RecentText`).
    let recentText = Mutex<RecentText?>(nil)
    /// Who this store's changes are by, and what of the history it keeps (see `History/`).
    let history = Mutex(HistorySettings())
    /// The file path, or nil for an in-memory store.
    public let path: String?
    /// True when the file or its folder cannot be written (a read-only disk, or permissions): memos
    /// are read as usual, and every change is refused with `StoreError.writeFailed`.
    public let isReadOnly: Bool
    /// How hard each commit works to reach the disk.
    public let durability: Durability
    /// Checkpoints the write-ahead log in the background; nil for a store in memory.
    let checkpointer: LogCheckpointer?
    /// The SQLite connections a store on a file has opened: the writer, any reader connection a pool's
    /// `read` opens, and each import's own (`openImportConnection`).
    let connections: ConnectionCount
    /// The order in which this store's write transactions, and those of the stores opened beside it in
    /// this process, get the file's write lock.
    let writeTurns: WriteTurns

    /// How hard a commit works to reach the disk.
    public enum Durability: String, Sendable, CaseIterable {
        /// A commit is in the write-ahead log when it returns: it survives the process being killed,
        /// and an operating-system crash or power cut can lose only the last moments, never corrupt.
        case committed
        /// Each commit also waits for `fsync`: it survives a power cut too, at a few hundred
        /// microseconds per change on a typical disk.
        case synced
    }

    /// Opens (creating if needed) the store at `path`, refusing files that are not CloudNotes stores.
    ///
    /// With `readOnly`, an existing store is only read: never created, migrated or changed (for
    /// shell completion, which must not touch a store that servers are using). A second connection of
    /// a process that may be importing (sync's, in the server) passes `discardingAbandonedImports: false`:
    /// the imports it would take for abandoned are its own process's, under way.
    public convenience init(path: String, durability: Durability = .committed, readOnly: Bool = false,
                            discardingAbandonedImports: Bool = true) throws {
        try self.init(path: path, durability: durability, readOnly: readOnly,
                      discardingAbandonedImports: discardingAbandonedImports, logLimits: .standard)
    }

    /// Opens the file of `store` again, for work beside it in this process (the server's sync): the
    /// two take turns at the write lock in the order they ask for it (`WriteTurns`), and this one leaves
    /// unfinished imports alone, since they are this process's own, under way.
    public convenience init(besides store: MemoStore) throws {
        guard let path = store.path else { throw StoreError.writeFailed("a store in memory has no file to open again") }
        try self.init(path: path, durability: store.durability, readOnly: false, discardingAbandonedImports: false,
                      logLimits: .standard, writeTurns: store.writeTurns)
    }

    /// Opens the store at `path`, checkpointing its write-ahead log at `logLimits`.
    init(path: String, durability: Durability, readOnly: Bool, discardingAbandonedImports: Bool,
         logLimits: LogCheckpointer.Limits, writeTurns: WriteTurns = WriteTurns()) throws {
        Self.combineLogWrites
        self.path = path
        self.writeTurns = writeTurns
        self.durability = durability
        if !readOnly { try Self.prepareFile(at: path) }
        let checkpointer = LogCheckpointer(path: path, limits: logLimits)
        self.checkpointer = checkpointer
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let connections = ConnectionCount()
        self.connections = connections
        configuration.prepareDatabase { db in
            try Self.prepareConnection(db, durability: durability, checkpointer: checkpointer, connections: connections)
        }
        if !readOnly, Self.canWrite(at: path) {
            writer = try Self.openPool(at: path, configuration: configuration)
            isReadOnly = false
            if discardingAbandonedImports { try discardAbandonedImports() }
        } else {
            try Self.checkIdentity(ofFileAt: path)
            writer = try Self.openReadOnly(at: path, configuration: configuration)
            isReadOnly = true
        }
        try noteCaughtUp()
    }

    /// Checks the file is a CloudNotes store (or empty), opens the pool, checks the schema and migrates it.
    ///
    /// Two editors started at once on a new store would both migrate it, and one could see the other's
    /// half-made schema: the processes opening the same folder's stores take turns, holding an
    /// exclusive `flock` on the folder (not on the file, whose descriptors carry SQLite's own locks).
    private static func openPool(at path: String, configuration: Configuration) throws -> DatabasePool {
        let lock = open(folder(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        defer {
            if lock >= 0 { close(lock) }  // closing releases the flock
        }
        // Opening takes milliseconds: a process that holds the lock for long is stuck, and waiting
        // on it forever would leave this one silent.
        let deadline = ContinuousClock.now + .seconds(10)
        while lock >= 0, flock(lock, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { break }  // no locks here (NFS): go on without
            guard ContinuousClock.now < deadline else {
                throw StoreError.writeFailed("another process has been opening this store for 10 seconds; is it stuck?")
            }
            Thread.sleep(forTimeInterval: 0.01)
        }
        // Look before touching: opening a pool switches the file to WAL mode, which writes to it.
        try checkIdentity(ofFileAt: path)
        let pool = try DatabasePool(path: path, configuration: configuration)
        // On the writer connection, as the rest of opening a store: a pool's `read` would open a reader
        // connection first, which slows a server's start-up, and nothing else at start-up needs one.
        try pool.writeWithoutTransaction { db in try checkSchemaVersion(db, path: path) }
        try migrator.migrate(pool)
        return pool
    }

    /// The folder that holds the store file and its write-ahead log.
    static func folder(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    /// A store in memory, for tests.
    public init() throws {
        path = nil
        isReadOnly = false
        durability = .committed
        checkpointer = nil
        writeTurns = WriteTurns()
        connections = ConnectionCount()
        var configuration = Configuration()
        configuration.prepareDatabase { db in try Self.prepareConnection(db) }
        writer = try DatabaseQueue(configuration: configuration)
        try Self.migrator.migrate(writer)
        try noteCaughtUp()
    }

    /// What makes the store readable by other users: a folder with group or other permissions, or a
    /// file (or its write-ahead log) with any. Empty when the store is private.
    public static func privacyProblems(ofStoreAt path: String) -> [String] {
        let folder = folder(of: path)
        var problems: [String] = []
        for (item, isFolder) in [(folder, true), (path, false), (path + "-wal", false)] {
            // `stat` itself: FileManager's attributes also look up the owner's and group's names,
            // which reads /etc/passwd and /etc/group on every start-up.
            var status = stat()
            guard stat(item, &status) == 0 else { continue }
            let mode = Int(status.st_mode)
            if mode & 0o077 != 0 {
                let wanted = isFolder ? "0700" : "0600"
                problems.append("\(item) is readable by other users (mode \(String(mode & 0o777, radix: 8))); run: chmod \(wanted) '\(item)'")
            }
        }
        return problems
    }

    /// Makes SQLite write each transaction's log frames with one write, not two per page (see
    /// `CSQLiteLogWrites`), before the first store opens its file. Should it fail, SQLite's own VFS
    /// stays: the same files, written in more calls.
    private static let combineLogWrites: Void = { _ = cloudnotes_combine_log_writes() }()

    /// The most memory, in KiB, that one connection's page cache holds (SQLite's default is 2,000).
    static let pageCacheKiB = 4096
    /// SQLite's own default, for work that reads each page once.
    static let defaultPageCacheKiB = 2000

    /// Sets up a new connection of a store on a file: counted, committing with `durability`, its commits
    /// watched by `checkpointer`, and as `prepareConnection(_:)` says.
    static func prepareConnection(_ db: Database, durability: Durability, checkpointer: LogCheckpointer,
                                  connections: ConnectionCount) throws {
        connections.opened.add(1, ordering: .relaxed)
        try db.execute(sql: "PRAGMA synchronous = \(durability == .synced ? "FULL" : "NORMAL")")
        try db.execute(sql: "PRAGMA journal_size_limit = \(checkpointer.limits.keptLogBytes)")
        try prepareConnection(db)
        checkpointer.watchCommits(of: db)
    }

    /// Sets up a new connection: statement journals in memory, freed pages left as they are, and the SQL
    /// functions the store's queries use.
    private static func prepareConnection(_ db: Database) throws {
        // SQLite spills a statement journal larger than 64 KiB to a new temporary file, so each keystroke
        // in a long memo created, wrote and deleted a file in /var/tmp. In memory, a journal holds every
        // page its statement changed until the statement ends: a statement that changes many rows must
        // change them a chunk at a time (as `ImportSession.finish` does).
        try db.execute(sql: "PRAGMA temp_store = MEMORY")
        // Debian builds SQLite with secure_delete on: every page a change frees is overwritten with zeros
        // and logged, so a keystroke in a long memo logged as many pages of zeros over the old text as
        // of new text. FAST still zeroes what is deleted
        // inside the pages a change writes anyway. The old text's pages are no secret kept: the next
        // keystroke takes them back, the log holds older page images until it restarts, and a deleted
        // memo's row and sync's revisions keep their texts anyway.
        try db.execute(sql: "PRAGMA secure_delete = FAST")
        // The index pages a common term's lookup reads nearly filled SQLite's default 2 MB cache, and a
        // page of results evicted some of them before the next search, which read them again. An
        // import's own connection keeps the default (`openImportConnection`): it reads each page once.
        try db.execute(sql: "PRAGMA cache_size = \(-pageCacheKiB)")
        db.add(function: SearchFilter.caseInsensitiveContains)
        db.add(function: IndexFolding.secondLook)
        try GatheredIDs.register(on: db)
    }

    /// Creates the folder (0700) and the file (0600) so that SQLite never creates them world-readable.
    private static func prepareFile(at path: String) throws {
        let folder = folder(of: path)
        if !FileManager.default.fileExists(atPath: folder) {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        let fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
    }

    /// Refuses a foreign SQLite file or one written by a newer CloudNotes, reading it without changing a byte.
    ///
    /// A file whose header already names CloudNotes needs no second connection: its schema version is
    /// checked by `checkSchemaVersion` on the pool. Anything else is looked at through a read-only
    /// connection first.
    private static func checkIdentity(ofFileAt path: String) throws {
        if headerApplicationID(ofFileAt: path) == applicationID { return }
        try checkIdentityReadOnly(ofFileAt: path)
    }

    /// The `application_id` in the file's SQLite header (bytes 68-71, big-endian), or nil.
    private static func headerApplicationID(ofFileAt path: String) -> Int32? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let header = try? handle.read(upToCount: 100), header.count == 100,
              header.starts(with: Array("SQLite format 3\u{0}".utf8))
        else { return nil }
        return header[68..<72].reduce(Int32(0)) { $0 << 8 | Int32($1) }
    }

    /// Refuses a store whose schema was written by a newer CloudNotes.
    static func checkSchemaVersion(_ db: Database, path: String) throws {
        let known = Set(migrator.migrations)
        let unknown = try migrator.appliedIdentifiers(db).filter { !known.contains($0) }
        if !unknown.isEmpty { throw StoreError.newerSchema(path: path, unknownMigrations: unknown.sorted()) }
    }

    private static func checkIdentityReadOnly(ofFileAt path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: path, configuration: configuration)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
            throw StoreError.notACloudNotesStore(path: path)
        }
        try queue.read { db in
            let applicationID: Int32
            do {
                applicationID = try Int32.fetchOne(db, sql: "PRAGMA application_id") ?? 0
            } catch let error as DatabaseError where error.resultCode == .SQLITE_NOTADB {
                throw StoreError.notACloudNotesStore(path: path)
            }
            if applicationID == 0 {
                let tableCount = try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master") ?? 0
                if tableCount > 0 { throw StoreError.notACloudNotesStore(path: path) }
                return
            }
            guard applicationID == Self.applicationID else { throw StoreError.notACloudNotesStore(path: path) }
            let known = Set(Self.migrator.migrations)
            let unknown = try Self.migrator.appliedIdentifiers(db).filter { !known.contains($0) }
            if !unknown.isEmpty { throw StoreError.newerSchema(path: path, unknownMigrations: unknown.sorted()) }
        }
    }

    // MARK: - Reading

    /// The live memo with `id`, or nil (unknown or deleted).
    public func memo(id: String) throws -> StoredMemo? {
        try serialized { db in try Self.liveMemo(id: id, db) }
    }

    /// Which memos a lookup by id considers.
    public enum MemoSet: Sendable {
        case live, trash, liveOrTrash

        var condition: String {
            switch self {
            case .live: MemoStore.visible
            case .trash: "trashedAt IS NOT NULL"
            case .liveOrTrash: "(\(MemoStore.visible) OR trashedAt IS NOT NULL)"
            }
        }
    }

    /// The ids of the memos of `set` (live ones by default) that start with `prefix`, at most `limit`
    /// of them, in id order.
    ///
    /// Ids are lowercase hex and dashes, all below "g", so the prefix is a range of the id index.
    public func memoIDs(startingWith prefix: String, limit: Int, among set: MemoSet = .live) throws -> [String] {
        try serialized { db in
            try String.fetchAll(db, sql: """
                SELECT id FROM memo WHERE id >= ?1 AND id < ?1 || 'g' AND \(set.condition) ORDER BY id LIMIT ?2
                """, arguments: [prefix, limit])
        }
    }

    /// The number of live memos in the list under `filter`.
    public func count(filter: SearchFilter?) throws -> Int {
        try serialized { db in try count(filter: filter, db) }
    }

    /// Rows `offset..<offset+limit` of the list under `filter`.
    public func page(filter: SearchFilter?, offset: Int, limit: Int) throws -> [ListedMemo] {
        try serialized { db in try page(filter: filter, offset: offset, limit: limit, db) }
    }

    /// The position of memo `id` in the list under `filter`, or nil when it is not there.
    public func index(of id: String, filter: SearchFilter?) throws -> Int? {
        try serialized { db in
            // Its place only: not its text, which may be long.
            guard let row = try Row.fetchOne(
                db.cachedStatement(sql: "SELECT modifiedAt, seq FROM memo WHERE id = ? AND \(Self.visible)"), arguments: [id])
            else { return nil }
            return try index(of: ListOrderKey(modifiedAt: row[0], seq: row[1]), filter: filter, db)
        }
    }

    /// The position of `memo` (as just read) in the list under `filter`, or nil when it is not there.
    public func index(of memo: StoredMemo, filter: SearchFilter?) throws -> Int? {
        try serialized { db in try index(of: memo, filter: filter, db) }
    }

    /// The memo at `index` of the list under `filter`.
    public func memo(at index: Int, filter: SearchFilter?) throws -> StoredMemo? {
        try serialized { db in
            if index == 0, filter == nil {
                // The newest memo, as shown at start-up: one index lookup, no list order needed.
                return try StoredMemo.fetchOne(db.cachedStatement(sql: """
                    SELECT * FROM memo WHERE \(Self.visible) ORDER BY modifiedAt DESC, seq DESC LIMIT 1
                    """))
            }
            guard let row = try page(filter: filter, offset: index, limit: 1, db).first else { return nil }
            return try Self.liveMemo(id: row.id, db)
        }
    }

    /// Calls `body` with every live memo, newest first, in batches (for export).
    public func forEachMemo(batchSize: Int = 500, _ body: ([StoredMemo]) throws -> Void) throws {
        try writer.read { db in
            let cursor = try StoredMemo.fetchCursor(db, sql: "SELECT * FROM memo WHERE \(Self.visible) ORDER BY modifiedAt DESC, seq DESC")
            var batch: [StoredMemo] = []
            batch.reserveCapacity(batchSize)
            while let memo = try cursor.next() {
                batch.append(memo)
                if batch.count == batchSize {
                    try body(batch)
                    batch.removeAll(keepingCapacity: true)
                }
            }
            if !batch.isEmpty { try body(batch) }
        }
    }

    /// Folds the write-ahead log back into the file, so that the next start reads less; for a clean exit.
    public func checkpoint() {
        let truncate = { _ = try? self.writer.writeWithoutTransaction { db in try db.checkpoint(.truncate) } }
        if let checkpointer { checkpointer.exclusively(truncate) } else { truncate() }
    }

    /// Runs `PRAGMA integrity_check`; "ok" when the file is sound.
    public func integrityCheck() throws -> String {
        try writer.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "\n") }
    }

    // MARK: - Queries shared by reads and writes

    /// The condition for a memo the lists show: not deleted, not part of an unfinished import. Queries
    /// spell it exactly so, which lets SQLite use the partial index `memo_order`.
    static let visible = "deleted = 0 AND importBatch IS NULL"

    /// The memo `id` unless deleted or hidden; its text taken from `recent` when that is this row's text.
    static func liveMemo(id: String, _ db: Database, reusing recent: RecentText? = nil) throws -> StoredMemo? {
        // Cached statements: GRDB compiles a new statement with an authorizer, which costs more than the query.
        let statement = try db.cachedStatement(sql: "SELECT \(StoredMemo.steppedColumns) FROM memo WHERE id = ? AND \(visible)")
        // Each column is read from SQLite when asked, so the text is not read at all when `recent` has
        // it (the whole text, at every keystroke in a long memo).
        return try statement.withFirstRow(arguments: [id]) { StoredMemo(row: $0, reusing: recent) }
    }

    static func nextSeq(_ db: Database) throws -> Int64 {
        (try Int64.fetchOne(db.cachedStatement(sql: "SELECT max(seq) FROM memo")) ?? 0) + 1
    }
}

/// Counts the SQLite connections a store opens. A server's start-up opens the writer alone: a reader
/// connection would slow it (see `openPool`).
final class ConnectionCount: Sendable {
    let opened = Atomic<Int>(0)
}
