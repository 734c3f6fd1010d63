import CloudNotesProtocol
import CloudNotesStore
import Foundation

// MARK: - Split-view mediator

/// The split view without a screen: owns the list (its filter), the selection and the detail pane, turns
/// the client's intents into store changes, and tells the panes what they show now.
///
/// It is an actor whose methods never suspend, so each intent runs whole, without interleaving, and the
/// notifications it sends describe the state after that intent.
public actor SplitViewMediator {
    let store: MemoStore
    let sink: any NotificationSink
    let presenter: MemoPresenter
    let limits: InitializeResult.Limits
    let clock: @Sendable () -> Int64
    /// Whether rule S5 applies: false for a client with no detail pane (`cloudnotes mcp`), whose
    /// selection follows other processes' memos, and must never discard a blank one a person is
    /// about to type into in their editor.
    let discardsBlankSelection: Bool

    /// The list's search filter; nil shows every memo.
    var filter: SearchFilter?
    /// The memo the detail pane shows.
    var selectedID: String?
    /// Whether the selected memo's text was blank when last seen: only then can rule S5 discard it.
    var selectionMayBeBlank = false
    /// The version of the selected memo the client has: what the detail pane showed, or its own update.
    var selectedVersion: Int64?
    /// The selection as the client last heard it, so `selection/didChange` is sent only when it changed.
    var announced = AnnouncedSelection(id: nil, index: nil)

    /// The selected memo's id and list index, as `selection/didChange` last told them.
    struct AnnouncedSelection: Equatable {
        var id: String?
        var index: Int?
    }

    public init(
        store: MemoStore, sink: any NotificationSink, presenter: MemoPresenter, limits: InitializeResult.Limits,
        discardsBlankSelection: Bool = true,
        clock: @escaping @Sendable () -> Int64 = { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }
    ) {
        self.store = store
        self.sink = sink
        self.presenter = presenter
        self.limits = limits
        self.discardsBlankSelection = discardsBlankSelection
        self.clock = clock
    }

    // MARK: - Start

    /// Rule S1: select and show the newest memo, or clear the detail when there is none.
    public func start() throws(ResponseError) {
        try translatingErrors {
            try store.takeChangesElsewhere()  // what is shown now includes them
            if let newest = try store.memo(at: 0, filter: filter) {
                show(newest)
            } else {
                clearSelection()
            }
        }
    }

    // MARK: - Browsing

    public func list(_ request: ListRequest) throws(ResponseError) -> ListResult {
        try page(under: filter, offset: request.offset, limit: request.limit)
    }

    public func search(_ request: SearchRequest) throws(ResponseError) -> SearchResult {
        let limit = try pageLimit(request.limit)
        return try translatingErrors {
            // The filter changes only once the store has answered for it: a failing query leaves the list as it was.
            let newFilter = SearchFilter(request.query)
            try catchUp()
            let total = try store.resetList(filter: newFilter)
            filter = newFilter
            sink.send(ListDidReset(total: total))
            try announceSelection()
            return try readingHeard {
                SearchResult(query: request.query, total: try store.count(filter: filter),
                             rows: try store.page(filter: filter, offset: 0, limit: limit).map(presenter.row))
            }
        }
    }

    /// A page of the memos that hold `query`, for a client with no list pane (`cloudnotes mcp`): the
    /// list's own filter stays as it is, and the panes hear of nothing but other processes' changes.
    public func find(query: String, offset: Int?, limit: Int?) throws(ResponseError) -> ListResult {
        try page(under: SearchFilter(query), offset: offset, limit: limit)
    }

    /// A page of the memos under `pageFilter` (the list's own, or a search of its own), after the
    /// other processes' changes.
    private func page(under pageFilter: SearchFilter?, offset: Int?, limit: Int?) throws(ResponseError) -> ListResult {
        let (offset, limit) = try pageBounds(offset: offset, limit: limit)
        return try translatingErrors {
            try catchUp()
            return try readingHeard {
                ListResult(total: try store.count(filter: pageFilter),
                           rows: try store.page(filter: pageFilter, offset: offset, limit: limit).map(presenter.row))
            }
        }
    }

    /// Where a page starts and how many rows it may hold, the defaults filled in, within the limits.
    func pageBounds(offset: Int?, limit: Int?) throws(ResponseError) -> (offset: Int, limit: Int) {
        let offset = offset ?? 0
        guard offset >= 0 else { throw .invalidParams(param: "offset", "must be 0 or more") }
        return (offset, try pageLimit(limit))
    }

    /// The rows a page may hold: `limit`, or the default, within the limits.
    private func pageLimit(_ limit: Int?) throws(ResponseError) -> Int {
        let limit = limit ?? ListRequest.defaultLimit
        guard (1...limits.maxListLimit).contains(limit) else {
            throw .invalidParams(param: "limit", "must be between 1 and \(limits.maxListLimit)")
        }
        return limit
    }

    // MARK: - Editing

    /// Rule S2: the new memo enters at index 0, selected and shown; an active filter is cleared.
    public func create(_ request: CreateRequest) throws(ResponseError) -> MemoResult {
        let text = request.text ?? ""
        try checkSize(text)
        return try translatingErrors {
            try catchUp()
            try discardBlankSelection()
            let clearsFilter = filter != nil
            // The filter goes only once the memo is stored: a refused create leaves the list as it was.
            let change = try store.create(text: text, now: clock(), filter: nil)
            return MemoResult(memo: try showInserted(change, clearingFilter: clearsFilter))
        }
    }

    /// Rule S2 for a memo that entered the list unfiltered (`change`, made with no filter): the list
    /// hears of it, or is read anew when a filter goes; then it is selected and shown.
    func showInserted(_ change: ListChange, clearingFilter clearsFilter: Bool) throws -> Memo {
        filter = nil
        switch (clearsFilter, change.changesElsewhere) {
        case (true, _), (false, .reset?):
            sink.send(ListDidReset(total: try store.resetList(filter: filter)))
        case (false, let elsewhere):
            if case .moves(let moves)? = elsewhere { announce(moves) }
            sink.send(ListDidInsert(index: change.indexAfter ?? 0, row: presenter.row(change.memo)))
        }
        return show(change.memo)
    }

    /// Shows a memo; rule S5 discards a blank memo that loses the selection.
    public func select(_ request: SelectRequest) throws(ResponseError) -> MemoResult {
        try translatingErrors {
            try catchUp()
            let id = request.id.description
            guard let stored = try store.memo(id: id) else { throw ResponseError.memoNotFound(request.id) }
            guard selectedID != id else { return MemoResult(memo: presenter.memo(stored)) }
            try discardBlankSelection()
            return MemoResult(memo: show(stored))
        }
    }

    /// Rule S4: a deleted selection moves to the memo now at the same index, or the one above.
    public func delete(_ request: DeleteRequest) throws(ResponseError) -> DeleteResult {
        try translatingErrors {
            try catchUp()
            guard let change = try store.delete(id: request.id.description, now: clock(), filter: filter) else {
                throw ResponseError.memoNotFound(request.id)
            }
            try announce(change)
            if selectedID == change.memo.id {
                try selectNear(index: change.indexBefore ?? 0)
            } else {
                try announceSelection()
            }
            return DeleteResult(selected: try selectedID.flatMap { try store.memo(id: $0) }.map(presenter.memo))
        }
    }

    // MARK: - After an import

    /// The list changed wholesale: reset it, and select the newest memo if nothing was selected.
    public func didImport() throws(ResponseError) {
        try translatingErrors {
            try store.takeChangesElsewhere()  // the reset below includes them
            try resetPanes()
        }
    }

    // MARK: - Pane updates

    /// Selects `stored` and shows it in the detail pane; returns the memo as shown.
    @discardableResult
    func show(_ stored: StoredMemo) -> Memo {
        selectedID = stored.id
        selectionMayBeBlank = stored.text.isBlank
        selectedVersion = stored.version
        try? announceSelection(knowing: stored)
        let memo = presenter.memo(stored)
        sink.send(DetailDidShow(memo: memo))
        return memo
    }

    /// Rule S4: after the selected memo left the list, selects the memo now at `index`, or the one above,
    /// or clears the detail when the list is empty.
    func selectNear(index: Int) throws {
        selectedID = nil
        let target = min(index, try store.count(filter: filter) - 1)
        if target >= 0, let next = try store.memo(at: target, filter: filter) {
            show(next)
        } else {
            clearSelection()
        }
    }

    func clearSelection() {
        selectedID = nil
        selectionMayBeBlank = false
        selectedVersion = nil
        try? announceSelection()
        sink.send(DetailDidClear())
    }

    /// Tells the list pane where a changed memo went: moved, entered or left the filtered list.
    func announceMove(of change: ListChange) {
        announceMove(from: change.indexBefore, to: change.indexAfter, row: presenter.row(change.memo))
    }

    /// Tells the list pane where a memo went, from and to its indexes in the (filtered) list.
    func announceMove(from: Int?, to: Int?, row: @autoclosure () -> MemoRow) {
        switch (from, to) {
        case let (from?, to?):
            sink.send(ListDidUpdate(fromIndex: from, toIndex: to, row: row()))
        case let (from?, nil):
            sink.send(ListDidRemove(index: from, id: row().id))
        case let (nil, to?):
            sink.send(ListDidInsert(index: to, row: row()))
        case (nil, nil):
            break
        }
    }

    /// Sends `selection/didChange` when the selected memo or its index is not what the client last heard.
    ///
    /// `selected`, when given, is the selected memo as just read or written, which saves reading it again.
    func announceSelection(knowing selected: StoredMemo? = nil) throws {
        let index = try readingHeard { () throws -> Int? in
            if let selected, selected.id == selectedID {
                return try store.index(of: selected, filter: filter)
            }
            return try selectedID.flatMap { try store.index(of: $0, filter: filter) }
        }
        announceSelection(index: index)
    }

    /// Sends `selection/didChange` when the selected memo is not at `index` as the client last heard.
    func announceSelection(index: Int?) {
        let now = AnnouncedSelection(id: selectedID, index: index)
        guard now != announced else { return }
        announced = now
        sink.send(SelectionDidChange(id: now.id.flatMap(MemoID.init), index: now.index))
    }

    /// Rule S5: a selected memo left blank is discarded when the selection moves away from it.
    func discardBlankSelection() throws {
        // A read-only store keeps its blank memos: refusing the discard must not pin the selection.
        guard discardsBlankSelection, selectionMayBeBlank, !store.isReadOnly, let selectedID,
              let change = try store.delete(id: selectedID, now: clock(), filter: filter, onlyIfBlank: true)
        else { return }
        self.selectedID = nil
        try announce(change)
    }

    // MARK: - Helpers

    func checkSize(_ text: String) throws(ResponseError) {
        try Self.checkSize(text, limits: limits)
    }

    /// Refuses a text longer than a memo may be.
    nonisolated static func checkSize(_ text: String, limits: InitializeResult.Limits) throws(ResponseError) {
        if text.utf8.count > limits.maxMemoBytes {
            throw .invalidParams(param: "text", "is longer than the \(limits.maxMemoBytes)-byte limit of a memo")
        }
    }

    /// Runs `body`, turning store errors into the protocol errors a client can act on.
    func translatingErrors<T>(baseVersion: Int64? = nil, _ body: () throws -> T) throws(ResponseError) -> T {
        do {
            return try body()
        } catch {
            throw ResponseError.from(error, presenter: presenter, baseVersion: baseVersion)
        }
    }
}
