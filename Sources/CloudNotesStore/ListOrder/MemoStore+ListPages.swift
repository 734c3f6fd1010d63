import GRDB

// MARK: - Positions and pages of the list orders

extension MemoStore {
    // MARK: Positions

    /// The memo's index in the list under `filter`; nil when it is not in that list.
    func index(of memo: StoredMemo, filter: SearchFilter?, _ db: Database) throws -> Int? {
        guard !memo.deleted, !memo.importing else { return nil }
        return try index(of: memo.orderKey, filter: filter, db)
    }

    /// The position of the visible memo at `key` in the list under `filter`, or nil when it is not there.
    func index(of key: ListOrderKey, filter: SearchFilter?, _ db: Database) throws -> Int? {
        if filter == nil, !isOrderLoaded {
            // Before the order is in memory (just after start-up), count: cheap near the top, where
            // the first memo shown is.
            return try Int.fetchOne(db.cachedStatement(sql: """
                SELECT count(*) FROM memo WHERE \(Self.visible) AND (modifiedAt, seq) > (?, ?)
                """), arguments: [key.modifiedAt, key.seq])
        }
        return try withOrder(filter: filter, db) { $0.index(of: key) }
    }

    private var isOrderLoaded: Bool { cache.state.withLock { $0.all != nil } }

    /// Whether the orders in memory include a filtered list, which places each memo written by reading
    /// its row (`cacheInsert`).
    var holdsFilteredOrder: Bool { cache.state.withLock { $0.filtered != nil } }

    /// Whether the order of every memo has not been read yet: just after start-up, while it is read in
    /// the background (`loadListOrder`), the first pages and the count are read from the file instead.
    private var isStartingUp: Bool {
        cache.builds.load(ordering: .relaxed) == 0 && !isOrderLoaded
    }

    func count(filter: SearchFilter?, _ db: Database) throws -> Int {
        if filter == nil, isStartingUp {
            // Counted through the order's index.
            return try Int.fetchOne(db.cachedStatement(sql: "SELECT count(*) FROM memo WHERE \(Self.visible)")) ?? 0
        }
        return try withOrder(filter: filter, db) { $0.count }
    }

    func page(filter: SearchFilter?, offset: Int, limit: Int, _ db: Database) throws -> [ListedMemo] {
        if filter == nil, isStartingUp {
            // Read through the order's index: the first screen costs its rows, not the order of every
            // memo; a page far down costs a walk of the index to it, still less than reading the order.
            var rows: [ListedMemo] = []
            try db.cachedStatement(sql: """
                SELECT localID, id, title, preview, modifiedAt, seq FROM memo WHERE \(Self.visible)
                ORDER BY modifiedAt DESC, seq DESC LIMIT ? OFFSET ?
                """).forEachRow(arguments: [limit, offset]) { rows.append(ListedMemo(row: $0)) }
            return rows
        }
        let localIDs = try withOrder(filter: filter, db) { $0.page(offset: offset, limit: limit) }
        guard !localIDs.isEmpty else { return [] }
        // One cached statement for any page: the ids go in as one JSON array argument.
        let statement = try db.cachedStatement(sql: """
            SELECT memo.localID, memo.id, memo.title, memo.preview, memo.modifiedAt, memo.seq FROM json_each(?) AS page
            CROSS JOIN memo ON memo.localID = page.value
            """)
        var rows: [ListedMemo] = []
        rows.reserveCapacity(localIDs.count)
        try statement.forEachRow(arguments: [Self.jsonArray(localIDs)]) { rows.append(ListedMemo(row: $0)) }
        return Self.ordered(rows, as: localIDs)
    }

    /// `rows` in the order of `localIDs`, without the ones `rows` lacks.
    ///
    /// The array drives the join (`CROSS JOIN` keeps it the outer loop), so the rows come in its order,
    /// and this only checks that. An `ORDER BY` would have SQLite copy every row into a sorter (a tenth
    /// of a list page's instructions); rows that are gone are left out here.
    static func ordered(_ rows: [ListedMemo], as localIDs: [Int64]) -> [ListedMemo] {
        if rows.count == localIDs.count, zip(rows, localIDs).allSatisfy({ $0.localID == $1 }) { return rows }
        let byLocalID = Dictionary(rows.map { ($0.localID, $0) }, uniquingKeysWith: { first, _ in first })
        return localIDs.compactMap { byLocalID[$0] }
    }

    /// Runs `body` with the order of the list under `filter`, building it first if needed.
    private func withOrder<T: Sendable>(filter: SearchFilter?, _ db: Database, _ body: (ListOrder) -> T) throws -> T {
        if let result = cache.state.withLock({ state -> T? in
            if let filter {
                guard let filtered = state.filtered, filtered.filter == filter else { return nil }
                return body(filtered.order)
            }
            return state.all.map(body)
        }) {
            return result
        }
        try loadAll(db)
        if let filter {
            let total = cache.state.withLock { $0.all?.count ?? 0 }
            let matched = try matchingLocalIDs(filter, memoCount: total, db)
            let few = matched.count <= total / Self.fewMatchesDivisor ? try orderEntries(of: matched, db) : nil
            cache.state.withLock { state in
                let entries: [ListOrder.Entry]
                if let few, let all = state.all, few.count == Set(matched).count, few.allSatisfy(all.contains) {
                    entries = few
                } else {
                    entries = state.all.map { LocalIDSet(matched).filter($0.entries, expected: matched.count, id: \.localID) } ?? []
                }
                state.filtered = ListCache.FilteredOrder(filter: filter, order: ListOrder(ascending: entries))
                // Moves logged for another filter's order cannot be told in this one.
                if let log = state.moveLog { state.moveLog = log.entries.isEmpty ? MoveLog(filter: filter) : nil }
            }
        }
        return try cache.state.withLock { state in
            guard let order = filter == nil ? state.all : state.filtered?.order else { throw StoreError.writeFailed("list order unavailable") }
            return body(order)
        }
    }

    private func loadAll(_ db: Database) throws {
        guard cache.state.withLock({ $0.all == nil }) else { return }
        // The memos and the highest number seen in one snapshot: a number read after another commit
        // could count as seen a change that the memos read lack.
        guard db.isInsideTransaction else {
            try db.inTransaction(.deferred) {
                try loadAll(db)
                return .commit
            }
            return
        }
        try install(try readOrder(db), db)
    }

    /// The order of every visible memo, as one snapshot holds it.
    struct LoadedOrder: Sendable {
        var entries: [ListOrder.Entry]
        /// Every change up to this number is in `entries`.
        var seenSeq: Int64
    }

    /// Reads the order of every visible memo; `db` must be in a transaction, so that it is one snapshot.
    private func readOrder(_ db: Database) throws -> LoadedOrder {
        var entries: [ListOrder.Entry] = []
        var newestVisible: Int64 = 0
        try db.cachedStatement(sql: "SELECT modifiedAt, seq, localID FROM memo WHERE \(Self.visible) ORDER BY modifiedAt, seq")
            .forEachRow { row in
                let entry = ListOrder.Entry(row)
                newestVisible = max(newestVisible, entry.key.seq)
                entries.append(entry)
            }
        // Every change up to the highest number is in the order (a later commit numbers its changes
        // above every number it sees). The memos deleted since the newest visible change count too:
        // after another process deleted many, each look would otherwise read them again, find too
        // many, and read the whole order again.
        let seenSeq = try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT max(seq) FROM memo WHERE seq > ? AND importBatch IS NULL
            """), arguments: [newestVisible]) ?? newestVisible
        return LoadedOrder(entries: entries, seenSeq: seenSeq)
    }

    /// Puts `loaded` in memory, on the writer connection `db`, which sees every change up to now.
    private func install(_ loaded: LoadedOrder, _ db: Database) throws {
        // Moves are logged from here on, unless the order already holds changes of other connections
        // that the split view has not taken: those it can only hear of as a reset.
        let unheard = try visibleChangeCount(db) != caughtUp.withLock { $0.visibleChanges }
        cache.state.withLock { state in
            state.all = ListOrder(ascending: loaded.entries)
            state.seenSeq = loaded.seenSeq
            state.moveLog = unheard ? nil : MoveLog()
        }
        cache.builds.add(1, ordering: .relaxed)
    }

    /// Builds the list order in memory now, so that the first request that needs it does not wait.
    ///
    /// It is read on a reader connection, and the writer, meanwhile, answers the first pages and the
    /// count from the file (`page`, `count`): a client's first screen does not wait for the order of
    /// every memo. Then it
    /// is brought up to date on the writer with the changes committed since its snapshot, of this
    /// connection and others alike, found by their numbers.
    public func loadListOrder() throws {
        guard !isOrderLoaded else { return }
        let loaded = try writer.read { db in try readOrder(db) }
        try serialized { db in
            guard cache.state.withLock({ $0.all == nil }) else { return }
            let limit = Self.followedChangesLimit(listCount: loaded.entries.count)
            guard let changes = try changes(since: loaded.seenSeq, limit: limit, db) else { return }
            var order = loaded
            if !changes.localIDs.isEmpty {
                var updated = ListOrder(ascending: order.entries)
                updated.replace(LocalIDSet(changes.localIDs), with: changes.entries)
                order = LoadedOrder(entries: updated.entries, seenSeq: changes.seenSeq)
            }
            try install(order, db)
        }
    }

    /// Up to one match in this many memos, the filtered order is made from the matches' own rows; above,
    /// by testing every entry of the whole order (a rare term among 100,000 memos: 10 row reads instead
    /// of 100,000 tests).
    static let fewMatchesDivisor = 64

    /// The order entries of the visible memos among `localIDs`, oldest first. The caller checks them
    /// against the whole order, which they must agree with.
    private func orderEntries(of localIDs: [Int64], _ db: Database) throws -> [ListOrder.Entry] {
        guard !localIDs.isEmpty else { return [] }
        let statement = try db.cachedStatement(sql: """
            SELECT modifiedAt, seq, localID FROM memo
            WHERE localID IN (SELECT value FROM json_each(?)) AND \(Self.visible) ORDER BY modifiedAt, seq
            """)
        var entries: [ListOrder.Entry] = []
        try statement.forEachRow(arguments: [Self.jsonArray(localIDs)]) { entries.append(ListOrder.Entry($0)) }
        return entries
    }

    /// `localIDs` as a JSON array, for one cached statement whatever their number (`json_each(?)`).
    ///
    /// Written digit by digit into one buffer: a page of a hundred ids made a hundred strings and
    /// joined them, about a twentieth of a list request's instructions.
    static func jsonArray(_ localIDs: [Int64]) -> String {
        var bytes: [UInt8] = [UInt8(ascii: "[")]
        bytes.reserveCapacity(2 + localIDs.count * 8)
        var digits: [UInt8] = []
        digits.reserveCapacity(20)
        for (index, localID) in localIDs.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            if localID < 0 { bytes.append(UInt8(ascii: "-")) }
            var rest = localID.magnitude
            digits.removeAll(keepingCapacity: true)
            repeat {
                digits.append(UInt8(ascii: "0") + UInt8(rest % 10))
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: digits.reversed())
        }
        bytes.append(UInt8(ascii: "]"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The local ids of every visible memo that matches `filter`, in no particular order, each once;
    /// `memoCount` visible memos in all.
    private func matchingLocalIDs(_ filter: SearchFilter, memoCount: Int, _ db: Database) throws -> [Int64] {
        // One snapshot: another process's index chunk committed between the index lookup and the read
        // of the memos it did not hold would hide the memos it moved from one to the other. (Indexing is
        // no visible change, so the wrong list would stay in memory.)
        guard db.isInsideTransaction else {
            var found: [Int64] = []
            try db.inTransaction(.deferred) {
                found = try matchingLocalIDs(filter, memoCount: memoCount, db)
                return .commit
            }
            return found
        }
        // Cached statements (the query is a bound argument): compiling them anew costs more than a rare
        // term's whole lookup.
        var found: [Int64]
        if let indexQuery = try filter.indexPhrase ?? filter.prefixTermsQuery(db, memoCount: memoCount) {
            found = indexQuery.isEmpty ? [] : try db.cachedStatement(sql: """
                SELECT \(GatheredIDs.functionName)(rowid) FROM memo_fts WHERE memo_fts MATCH ?
                """).gatheredInt64s(arguments: [indexQuery])
        } else {
            // The memos the index holds (no text of them holds NUL), read with the quicker condition, in
            // the table's order: SQLite would otherwise walk the visible memos' index (`memo_order`) and
            // read each text out of order, 2.3 times as long at 100,000 memos.
            found = try SQLRequest<Int64>(
                literal: "SELECT localID FROM memo NOT INDEXED WHERE \(sql: Self.visible) AND indexed AND \(filter.textCondition)",
                cached: true
            ).fetchAll(db)
        }
        // The memos the index does not hold are read directly, whole: the texts that hold NUL are among
        // them, which `textCondition` may end at the NUL.
        found += try SQLRequest<Int64>(literal: """
            SELECT localID FROM memo WHERE indexed = 0 AND deleted = 0 AND importBatch IS NULL \
            AND \(filter.textConditionPastNUL)
            """, cached: true).fetchAll(db)
        return found
    }
}
