import CloudNotesProtocol
import CloudNotesStore

// MARK: - Requests that change a memo's text

/// A request that changes the text of a memo: `memo/update` (the whole text) and `memo/edit` (changes
/// to it). Rule S3 treats both alike.
public protocol TextChangeRequest: RequestType {
    var id: MemoID { get }
    /// The version the client's change was made against, if it says.
    var expectedVersion: Int64? { get }
    /// Refuses a change the store need not be asked about.
    func check(limits: InitializeResult.Limits) throws(ResponseError)
    /// The change, for the store.
    func textUpdate(limits: InitializeResult.Limits) -> MemoStore.TextUpdate
    /// The reply once `change` is committed.
    func response(to change: ListChange, presenter: MemoPresenter) -> Response
}

extension UpdateRequest: TextChangeRequest {
    public var expectedVersion: Int64? { baseVersion }

    public func check(limits: InitializeResult.Limits) throws(ResponseError) {
        try SplitViewMediator.checkSize(text, limits: limits)
    }

    public func textUpdate(limits: InitializeResult.Limits) -> MemoStore.TextUpdate {
        let text = text
        return MemoStore.TextUpdate(id: id.description, baseVersion: baseVersion) { _ in text }
    }

    public func response(to change: ListChange, presenter: MemoPresenter) -> MemoResult {
        MemoResult(memo: presenter.memo(change.memo))
    }
}

extension EditRequest: TextChangeRequest {
    public var expectedVersion: Int64? { baseVersion }

    /// The edits are checked against the stored text, in the store's transaction.
    public func check(limits: InitializeResult.Limits) throws(ResponseError) {}

    public func textUpdate(limits: InitializeResult.Limits) -> MemoStore.TextUpdate {
        let edits = edits
        return MemoStore.TextUpdate(id: id.description, baseVersion: baseVersion) { text in
            try TextEdit.apply(edits, to: text, maxBytes: limits.maxMemoBytes)
        }
    }

    /// No text: the client has it.
    public func response(to change: ListChange, presenter: MemoPresenter) -> EditResult {
        let memo = change.memo
        return EditResult(
            id: id, version: memo.version, title: presenter.title(MemoText(memo.text).title),
            modifiedAt: Timestamp(milliseconds: memo.modifiedAt), displayDate: presenter.displayDate(memo.modifiedAt),
            length: memo.text.utf8.count)
    }
}

extension RestoreRequest: TextChangeRequest {
    public var expectedVersion: Int64? { baseVersion }

    public func check(limits: InitializeResult.Limits) throws(ResponseError) {}

    public func textUpdate(limits: InitializeResult.Limits) -> MemoStore.TextUpdate {
        MemoStore.TextUpdate(id: id.description, baseVersion: baseVersion, restoring: version)
    }

    public func response(to change: ListChange, presenter: MemoPresenter) -> MemoResult {
        MemoResult(memo: presenter.memo(change.memo))
    }
}

// MARK: - Rule S3

extension SplitViewMediator {
    /// Rule S3: the same memo, moved to the top in one `list/didUpdate`, acknowledged after the commit.
    public func update(_ request: UpdateRequest) throws(ResponseError) -> MemoResult {
        try changeText(request)
    }

    /// Rule S3 for an editor's changes: as `update`, with the new text made from the stored one in the
    /// same transaction, and a response that carries no text (the client has it).
    public func edit(_ request: EditRequest) throws(ResponseError) -> EditResult {
        try changeText(request)
    }

    /// Rule S3 for a restore of a kept version; the client does not have the restored text, so the
    /// detail pane shows it when the memo is selected.
    public func restore(_ request: RestoreRequest) throws(ResponseError) -> MemoResult {
        let result = try changeText(request)
        if selectedID == request.id.description { sink.send(DetailDidShow(memo: result.memo)) }
        return result
    }

    /// One change, as a run of one: the path every text change takes.
    private func changeText<Request: TextChangeRequest>(_ request: Request) throws(ResponseError) -> Request.Response {
        var reply: Result<any ResponseType, ResponseError>?
        changeTexts([request]) { _, answer in reply = answer }
        switch reply {
        case .success(let response as Request.Response)?: return response
        case .failure(let error)?: throw error
        default: throw .internalError("a text change was not answered")
        }
    }

    /// The reply to the request at an index of a burst.
    public typealias BurstAnswer = (_ index: Int, _ reply: Result<any ResponseType, ResponseError>) -> Void

    /// Rule S3 for text changes that arrived behind each other, or alone: each is announced and
    /// answered (through `answer`, in order) exactly as if it had come alone, but the changes to the
    /// selected memo (typing) are committed together, a run at a time.
    public func changeTexts(_ requests: [any TextChangeRequest], answer: BurstAnswer) {
        var rest = requests[...]
        while !rest.isEmpty {
            // Only the selected memo's changes go together: announcing one of them needs no more than
            // what the store returns for it (see `announceUpdate`), whatever the run did after it.
            let run = rest.prefix { isBurstable($0) }
            rest = rest.dropFirst(changeTogether(run.isEmpty ? rest.prefix(1) : run, answer: answer))
        }
    }

    private func isBurstable(_ request: any TextChangeRequest) -> Bool {
        guard request.id.description == selectedID else { return false }
        do { try request.check(limits: limits) } catch { return false }
        return true
    }

    /// Commits the leading changes of `run` in one transaction, then announces and answers each in
    /// order; returns how many it answered (at least one). When the store fails a run of several, each
    /// change of the run is made alone instead.
    private func changeTogether(_ run: ArraySlice<any TextChangeRequest>, answer: BurstAnswer) -> Int {
        let results: [Result<ListChange, any Error>]
        do {
            for request in run { try request.check(limits: limits) }
            try catchUp()
            results = try store.update(run.map { $0.textUpdate(limits: limits) }, now: clock(), filter: filter)
        } catch {
            guard run.count > 1 else {
                answer(run.startIndex, .failure(ResponseError.from(error, presenter: presenter, baseVersion: run.first?.expectedVersion)))
                return 1
            }
            // Nothing of the run is committed. Each goes again alone, as it came: a failure that one
            // change causes (a full disk at a long text) then refuses that change only, and the others
            // get what they would have got one at a time.
            for index in run.indices { _ = changeTogether(run[index...index], answer: answer) }
            return run.count
        }
        for (index, (request, result)) in zip(run.indices, zip(run, results)) {
            answer(index, Result { () throws(ResponseError) in
                try translatingErrors(baseVersion: request.expectedVersion) {
                    let change = try result.get()
                    try announceUpdate(change)
                    return request.response(to: change, presenter: presenter)
                }
            })
        }
        return results.count
    }

    /// Tells the panes about the client's own change: the list moves, the detail pane is left alone.
    func announceUpdate(_ change: ListChange) throws {
        guard change.changedAnything || change.followsChangesElsewhere else { return }
        // The client has this text already: the detail pane must not show it back.
        if change.memo.id == selectedID {
            selectionMayBeBlank = change.memo.text.isBlank
            selectedVersion = change.memo.version
        }
        try announce(change)
        if change.memo.id == selectedID, !change.followsChangesElsewhere {
            // Its index as the change left it, even when later changes of a burst are committed too.
            announceSelection(index: change.indexAfter)
        } else {
            try announceSelection(knowing: change.memo)
        }
    }
}
