import GRDB
import Synchronization

// MARK: - The list orders in memory

/// The list orders the store keeps in memory: every visible memo, and the memos that match the filter
/// asked for last. They are only read and changed on the store's writer connection, in step with the
/// writes. When another connection (another process, or the server's sync) has committed visible
/// changes, the memos it changed are moved in the order of every memo, read by their change numbers,
/// and the filtered order is dropped (`followChangesElsewhere`). A commit that changes nothing in the
/// list, such as background indexing, costs nothing: rebuilding an order costs a scan of every memo,
/// at the next keystroke.
final class ListCache: Sendable {
    struct State: Sendable {
        var all: ListOrder?
        var filtered: FilteredOrder?
        /// `PRAGMA data_version` of the writer connection, and the store's count of visible changes,
        /// when the orders were last known good.
        var dataVersion: Int64?
        var visibleChanges: Int64?
        /// A change sequence number (`memo.seq`) at or below which every change, of any connection, is
        /// in the orders: another connection's later changes are the memos above it.
        var seenSeq: Int64?
        /// How other connections' changes moved the memos since the split view last took them; nil when
        /// the orders did not follow them one by one (see `ChangesElsewhere.swift`).
        var moveLog: MoveLog?
    }

    struct FilteredOrder: Sendable {
        var filter: SearchFilter
        var order: ListOrder
    }

    let state = Mutex(State())
    /// How many times the order of every visible memo was read whole from the file.
    let builds = Atomic<Int>(0)

    func invalidate() {
        state.withLock { $0 = State() }
    }
}

extension MemoStore {
    /// Runs `body` on the writer connection, outside a transaction: reads that use the list orders.
    func serialized<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.writeWithoutTransaction { db in
            try followChangesElsewhere(db)
            return try body(db)
        }
    }

    /// The most memos changed elsewhere that the orders follow one by one: 1,000, or an eighth of
    /// the list when that is more; past it, rebuilding them costs less.
    static func followedChangesLimit(listCount: Int) -> Int { max(1000, listCount / 8) }

    /// What the orders do about the commits of other connections.
    private enum Following {
        /// None of them changed anything visible.
        case keep
        /// Take the memos changed since this sequence number.
        case follow(since: Int64)
        /// Rebuild at the next read (nothing is loaded, or what is loaded is not known well enough).
        case drop
    }

    /// Brings the orders up to date with the visible changes other connections committed since they
    /// were last known good: the memos changed since `seenSeq` move in one pass when they are few, and
    /// otherwise the orders are dropped, to be rebuilt at the next read.
    ///
    /// Dropping them on every such commit made the next keystroke rebuild the whole list: most
    /// keystrokes while a sync applied what it pulled, a part every few milliseconds.
    func followChangesElsewhere(_ db: Database) throws {
        let version = try dataVersion(db)
        guard cache.state.withLock({ $0.dataVersion }) != version else { return }
        let count = try visibleChangeCount(db)
        let following: Following = cache.state.withLock { state in
            if let count, state.visibleChanges == count {
                state.dataVersion = version
                return .keep
            }
            guard state.all != nil, let seen = state.seenSeq else { return .drop }
            return .follow(since: seen)
        }
        switch following {
        case .keep:
            return
        case .follow(let since):
            let limit = Self.followedChangesLimit(listCount: cache.state.withLock { $0.all?.count ?? 0 })
            if let changes = try changes(since: since, limit: limit, db) {
                if changes.localIDs.count <= MoveLog.limit, cache.state.withLock({ $0.moveLog != nil }) {
                    // Few, and a front end is to hear of them: one at a time, each move logged.
                    try followOneByOne(localIDs: changes.localIDs, entries: changes.entries, db)
                } else {
                    cache.state.withLock { state in
                        state.all?.replace(LocalIDSet(changes.localIDs), with: changes.entries)
                        state.filtered = nil  // rebuilt at the next search: which of them match costs a look each
                        state.moveLog = nil
                    }
                }
                cache.state.withLock { state in
                    state.seenSeq = changes.seenSeq
                    state.dataVersion = version
                    state.visibleChanges = count
                }
                return
            }
        case .drop:
            break
        }
        cache.state.withLock { $0 = ListCache.State(dataVersion: version, visibleChanges: count) }
    }

    /// The memos changed since `seq`: their local ids, the list entries of those still in the list, and
    /// the highest sequence number among them; nil when more than `limit` changed.
    ///
    /// The rows of an import still under way are left out: they are in no list, and their numbers are
    /// not counted as seen, since a cancelled import deletes its rows and frees their numbers.
    func changes(since seq: Int64, limit: Int, _ db: Database)
        throws -> (localIDs: [Int64], entries: [ListOrder.Entry], seenSeq: Int64)?
    {
        var localIDs: [Int64] = []
        var entries: [ListOrder.Entry] = []
        var seenSeq = seq
        try db.cachedStatement(sql: """
            SELECT modifiedAt, seq, localID, deleted FROM memo WHERE seq > ? AND importBatch IS NULL ORDER BY seq LIMIT ?
            """).forEachRow(arguments: [seq, limit + 1]) { row in
                let entry = ListOrder.Entry(row)
                localIDs.append(entry.localID)
                if !row.bool(3) { entries.append(entry) }
                seenSeq = entry.key.seq
            }
        return localIDs.count <= limit ? (localIDs, entries, seenSeq) : nil
    }

    /// Records that the orders hold the change numbered `seq`, made on this connection after it
    /// followed every change before it.
    func noteSeen(seq: Int64) {
        cache.state.withLock { state in
            if state.all != nil, let seen = state.seenSeq { state.seenSeq = max(seen, seq) }
        }
    }

    // MARK: Keeping the orders in step with a write

    /// Records that `memo` left the lists (deleted, or about to move).
    func cacheRemove(_ memo: StoredMemo) {
        cache.state.withLock { state in
            state.all?.remove(memo.orderKey)
            state.filtered?.order.remove(memo.orderKey)
        }
    }

    /// Records that `memo` (visible, just written) is in the lists at its key.
    func cacheInsert(_ memo: StoredMemo, _ db: Database) throws {
        guard let localID = memo.localID else { return }
        let entry = ListOrder.Entry(key: memo.orderKey, localID: localID)
        let filter = cache.state.withLock { state -> SearchFilter? in
            state.all?.insert(entry)
            return state.filtered?.filter
        }
        if let filter, try matches(memo, filter: filter, db) {
            cache.state.withLock { $0.filtered?.order.insert(entry) }
        }
    }

    /// Whether `memo`, as just written, matches `filter`.
    func matches(_ memo: StoredMemo, filter: SearchFilter, _ db: Database) throws -> Bool {
        guard let localID = memo.localID else { return false }
        // `condition` may end a text at a NUL; the text is at hand to look for one.
        let condition = memo.text.holdsNUL ? filter.textConditionPastNUL : filter.condition
        // Not cached: the filter's SQL varies, and this runs once per change under a filter.
        return try SQLRequest<Int>(literal: "SELECT 1 FROM memo WHERE localID = \(localID) AND \(condition)").fetchOne(db) != nil
    }
}

extension ListOrder.Entry {
    /// The entry of a stepped row whose first three columns are `modifiedAt, seq, localID`.
    init(_ row: SteppedRow) {
        self.init(key: ListOrderKey(modifiedAt: row.int64(0), seq: row.int64(1)), localID: row.int64(2))
    }
}
