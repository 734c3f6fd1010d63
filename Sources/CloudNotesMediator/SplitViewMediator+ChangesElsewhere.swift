import CloudNotesProtocol
import CloudNotesStore

// MARK: - Changes made by other processes

extension SplitViewMediator {
    /// Catches up with changes other processes (a second editor, the shell) committed to the store.
    ///
    /// The server calls this when its watcher sees such changes, and every intent does it first, so
    /// that the notifications of an intent always describe a list the client has heard of.
    public func catchUpWithChangesElsewhere() throws(ResponseError) {
        try translatingErrors { try catchUp() }
    }

    func catchUp() throws {
        guard try store.takeChangesElsewhere() else { return }
        do {
            try resetPanes()
        } catch {
            store.forgetCaughtUp()  // the client did not hear of them: the next intent tries again
            throw error
        }
    }

    /// Announces a change this process made: one row moved, or, when the change also carried
    /// changes of other processes the client has not heard of, the whole list again.
    func announce(_ change: ListChange) throws {
        if change.followsChangesElsewhere {
            try resetPanes()
        } else {
            announceMove(of: change)
        }
    }

    /// The list pane reloads (`list/didReset`), as after an import, and the detail pane follows its memo:
    /// - edited elsewhere: `detail/didShow` with the new text and version, so the client's next update
    ///   with the old `baseVersion` is refused instead of overwriting;
    /// - deleted elsewhere: the selection moves as after a delete (rule 4);
    /// - nothing selected and memos appeared: the newest is shown, as at start (rule 1).
    func resetPanes() throws {
        sink.send(ListDidReset(total: try store.count(filter: filter)))
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
