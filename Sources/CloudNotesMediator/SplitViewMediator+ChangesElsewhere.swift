import CloudNotesProtocol
import CloudNotesStore

// MARK: - Changes made by other processes

extension SplitViewMediator {
    /// Catches up with changes other processes (a second editor, the shell, a sync) committed to the
    /// store.
    ///
    /// The server calls this when its watcher sees such changes, and every intent does it first, so
    /// that the notifications of an intent always describe a list the client has heard of.
    public func catchUpWithChangesElsewhere() throws(ResponseError) {
        try translatingErrors { try catchUp() }
    }

    func catchUp() throws {
        guard let changes = try store.takeChangesElsewhere(filter: filter) else { return }
        do {
            try follow(changes)
        } catch {
            store.forgetCaughtUp()  // the client did not hear of them all: the next intent resets the list
            throw error
        }
    }

    /// Announces a change this process made: one row moved, after the changes of other processes that
    /// the change took and the client has not heard of, and the detail pane as those left it.
    func announce(_ change: ListChange) throws {
        switch change.changesElsewhere {
        case nil:
            announceMove(of: change)
        case .reset(let total)?:
            sink.send(ListDidReset(total: total))  // the list read anew holds this change too
            try followSelection()
        case .moves(let moves)?:
            announce(moves)
            announceMove(of: change)
            try followSelection()
        }
    }

    /// Tells the panes of other processes' changes: the list memo by memo (or anew, when they were too
    /// many), then the selection and the detail pane as they now are.
    func follow(_ changes: ChangesElsewhere) throws {
        announceList(changes)
        try followSelection()
    }

    /// Tells the list pane of other processes' changes: memo by memo, or anew.
    private func announceList(_ changes: ChangesElsewhere) {
        switch changes {
        case .moves(let moves): announce(moves)
        case .reset(let total): sink.send(ListDidReset(total: total))
        }
    }

    /// Reads with `body`, then tells the client of the other processes' changes that the reads followed
    /// (and the result already counts), reading again while there were some: what the client is told
    /// next must describe a list it has heard of.
    func readingHeard<T>(_ body: () throws -> T) throws -> T {
        while true {
            let result = try body()
            guard let changes = try store.takeFollowedChanges(filter: filter) else { return result }
            announceList(changes)
        }
    }

    /// The memos that other processes changed: each moved, entered or left the (filtered) list.
    func announce(_ moves: [ListMove]) {
        for move in moves { announceMove(from: move.from, to: move.to, row: presenter.row(move.row)) }
    }

    /// The list pane reloads (`list/didReset`), as after an import, and the detail pane follows its memo.
    func resetPanes() throws {
        try follow(.reset(total: try store.resetList(filter: filter)))
    }

    /// The detail pane follows its memo after other processes' changes:
    /// - edited elsewhere: `detail/didShow` with the new text and version, so the client's next update
    ///   with the old `baseVersion` is refused instead of overwriting;
    /// - deleted elsewhere: the selection moves as after a delete (rule S4);
    /// - nothing selected and memos appeared: the newest is shown, as at start (rule S1).
    func followSelection() throws {
        guard let selectedID else {
            if let newest = try store.memo(at: 0, filter: nil) { show(newest) } else { try announceSelection() }
            return
        }
        guard let current = try store.memo(id: selectedID) else {
            try selectNear(index: announced.index ?? 0)
            return
        }
        if current.version != selectedVersion {
            show(current)
        } else {
            try announceSelection(knowing: current)
        }
    }
}
