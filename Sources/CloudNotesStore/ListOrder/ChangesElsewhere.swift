import GRDB

// MARK: - Other processes' changes, memo by memo

/// What other connections (other processes, the server's sync) changed in the list since the split view
/// last took their changes: memo by memo, so that a front end showing a window of the list can keep it
/// right without reading it again, or, when that is not known, the list as a whole.
public enum ChangesElsewhere: Sendable, Equatable {
    /// The memos that moved, entered or left the list, in the order to apply them: each one's indexes
    /// are positions in the list as the moves before it left it.
    case moves([ListMove])
    /// The list must be read again, and now holds `total` memos: too many memos changed, or they were
    /// not followed one by one.
    case reset(total: Int)
}

/// One memo that another connection changed: where it was in the list and where it is now.
public struct ListMove: Sendable, Equatable {
    /// The memo's row as it is now (a deleted memo's as it was deleted).
    public var row: ListedMemo
    /// Its index before; nil when it was not in the list.
    public var from: Int?
    /// Its index after; nil when it is not in the list any more.
    public var to: Int?
}

/// The moves of other connections' changes, as the list orders in memory followed them memo by memo
/// (`MemoStore.followOneByOne`), until the split view takes them.
struct MoveLog: Sendable {
    /// A memo's move in the order of every memo and, when one was held, in the filtered order.
    struct Entry: Sendable {
        var localID: Int64
        var all: Positions
        var filtered: Positions?
    }

    struct Positions: Sendable {
        var from: Int?
        var to: Int?
    }

    var entries: [Entry] = []
    /// The filter of the filtered order the entries' `filtered` positions are in.
    var filter: SearchFilter?

    /// The most moves announced one by one; past it the list is read again, which costs a front end
    /// one page however many memos changed.
    static let limit = 100
}

extension MemoStore {
    /// The visible changes other connections committed since the split view last took them, as moves
    /// in the list under `filter`; nil when there are none. Notes that the split view is now caught up.
    ///
    /// SQLite's `data_version` moves with other connections' commits only, so this process's own
    /// writes, which the mediator announces as it makes them, never count; among those commits, only
    /// the ones that counted a visible change do.
    public func takeChangesElsewhere(filter: SearchFilter?) throws -> ChangesElsewhere? {
        try writer.writeWithoutTransaction { db in
            try followChangesElsewhere(db)
            return try takeFollowed(filter: filter, db)
        }
    }

    /// The visible changes of other connections that the list orders followed since the split view last
    /// took them (a read follows them), without looking for more; nil when there are none.
    ///
    /// The split view takes them before it tells the client anything it read, which must describe a
    /// list the client has heard of.
    public func takeFollowedChanges(filter: SearchFilter?) throws -> ChangesElsewhere? {
        try writer.writeWithoutTransaction { db in try takeFollowed(filter: filter, db) }
    }

    /// Notes that the client is told the list anew, as the orders hold it now; returns its length.
    ///
    /// Everything followed up to then, of any connection, is in that list: no move logged before it is
    /// announced after it.
    public func resetList(filter: SearchFilter?) throws -> Int {
        try writer.writeWithoutTransaction { db in
            try followChangesElsewhere(db)
            _ = try takeFollowed(filter: filter, db)
            return try count(filter: filter, db)
        }
    }

    /// The visible changes the orders followed and the split view has not taken, taken now; nil when
    /// there are none.
    func takeFollowed(filter: SearchFilter?, _ db: Database) throws -> ChangesElsewhere? {
        if isReadOnly { return nil }
        let followed = cache.state.withLock { CaughtUp(dataVersion: $0.dataVersion, visibleChanges: $0.visibleChanges) }
        guard let count = followed.visibleChanges, count != caughtUp.withLock({ $0.visibleChanges }) else { return nil }
        caughtUp.withLock { $0 = followed }
        return try takeMoves(filter: filter, db)
    }

    /// The moves logged since they were last taken, in the list under `filter` and with their rows;
    /// the log starts again, empty.
    private func takeMoves(filter: SearchFilter?, _ db: Database) throws -> ChangesElsewhere {
        let log = cache.state.withLock { state in
            defer { state.moveLog = state.all == nil ? nil : MoveLog(filter: state.filtered?.filter) }
            return state.moveLog
        }
        let reset = ChangesElsewhere.reset(total: try count(filter: filter, db))
        guard let log else { return reset }
        let positions: [MoveLog.Positions]
        if let filter {
            guard log.filter == filter else { return reset }
            let filtered = log.entries.compactMap(\.filtered)
            guard filtered.count == log.entries.count else { return reset }
            positions = filtered
        } else {
            positions = log.entries.map(\.all)
        }
        let rows = try listedMemos(localIDs: log.entries.map(\.localID), db)
        var moves: [ListMove] = []
        for (entry, position) in zip(log.entries, positions) where position.from != nil || position.to != nil {
            guard let row = rows[entry.localID] else { return reset }
            moves.append(ListMove(row: row, from: position.from, to: position.to))
        }
        return .moves(moves)
    }

    /// The list columns of the memos with these local ids, deleted or not.
    private func listedMemos(localIDs: [Int64], _ db: Database) throws -> [Int64: ListedMemo] {
        guard !localIDs.isEmpty else { return [:] }
        var rows: [Int64: ListedMemo] = [:]
        try db.cachedStatement(sql: """
            SELECT localID, id, title, preview, modifiedAt, seq FROM memo WHERE localID IN (SELECT value FROM json_each(?))
            """).forEachRow(arguments: [Self.jsonArray(localIDs)]) { row in
                let listed = ListedMemo(row: row)
                rows[listed.localID] = listed
            }
        return rows
    }

    /// Moves the memos another connection changed in the orders one at a time, logging where each
    /// went, for the split view to announce as moves (`takeChangesElsewhere(filter:)`).
    ///
    /// `changes` lists the memos in the order of their changes, each once; `entries` the places of
    /// those still in the list.
    func followOneByOne(localIDs: [Int64], entries: [ListOrder.Entry], _ db: Database) throws {
        let changed = LocalIDSet(localIDs)
        let (old, filter) = cache.state.withLock { state in
            (state.all.map { order in changed.filter(order.entries, expected: localIDs.count, id: \.localID) } ?? [],
             state.filtered?.filter)
        }
        let oldEntries = Dictionary(old.map { ($0.localID, $0) }, uniquingKeysWith: { first, _ in first })
        let newEntries = Dictionary(entries.map { ($0.localID, $0) }, uniquingKeysWith: { first, _ in first })
        // Which of them match the filtered order's filter now: one look for all, before the lock.
        let matching: Set<Int64> = try filter.map { filter in
            Set(try SQLRequest<Int64>(literal: """
                SELECT localID FROM memo WHERE localID IN (SELECT value FROM json_each(\(Self.jsonArray(entries.map(\.localID)))))
                AND \(sql: Self.visible) AND \(filter.textConditionPastNUL)
                """).fetchAll(db))
        } ?? []
        cache.state.withLock { state in
            guard var all = state.all else { return }
            var filtered = state.filtered
            var logged: [MoveLog.Entry] = []
            for localID in localIDs {
                let (before, after) = (oldEntries[localID], newEntries[localID])
                var entry = MoveLog.Entry(localID: localID, all: Self.move(in: &all, from: before, to: after))
                if filtered != nil {
                    let stays = after.map { matching.contains($0.localID) } ?? false
                    entry.filtered = Self.move(in: &filtered!.order, from: before, to: stays ? after : nil)
                }
                logged.append(entry)
            }
            state.all = all
            state.filtered = filtered
            if var log = state.moveLog, log.filter == filtered?.filter, log.entries.count + logged.count <= MoveLog.limit {
                log.entries += logged
                state.moveLog = log
            } else {
                state.moveLog = nil
            }
        }
    }

    /// Moves one memo in `order`, from the entry it had (if it is there) to the one it has now (if any).
    private static func move(in order: inout ListOrder, from before: ListOrder.Entry?, to after: ListOrder.Entry?)
        -> MoveLog.Positions
    {
        var positions = MoveLog.Positions()
        if let before, order.contains(before) {
            positions.from = order.index(of: before.key)
            order.remove(before.key)
        }
        if let after {
            order.insert(after)
            positions.to = order.index(of: after.key)
        }
        return positions
    }
}
