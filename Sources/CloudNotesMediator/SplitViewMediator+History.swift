import CloudNotesProtocol
import CloudNotesStore

// MARK: - Versions and the trash

extension SplitViewMediator {
    /// A page of a memo's kept versions, newest first; changes nothing.
    public func history(_ request: HistoryRequest) throws(ResponseError) -> HistoryResult {
        let (offset, limit) = try pageBounds(offset: request.offset, limit: request.limit)
        return try translatingErrors {
            let (total, versions) = try store.versions(ofMemo: request.id.description, offset: offset, limit: limit)
            return HistoryResult(id: request.id, total: total, versions: versions.map(presenter.row))
        }
    }

    /// One kept version with its text; changes nothing.
    public func version(_ request: VersionRequest) throws(ResponseError) -> VersionResult {
        try translatingErrors {
            let version = try store.version(ofMemo: request.id.description, number: request.version)
            return VersionResult(id: request.id, row: presenter.row(version.info), text: version.text)
        }
    }

    /// A page of the trash, most recently deleted first; changes nothing.
    public func trash(_ request: TrashListRequest) throws(ResponseError) -> TrashListResult {
        let (offset, limit) = try pageBounds(offset: request.offset, limit: request.limit)
        return try translatingErrors {
            let (total, memos) = try store.trash(offset: offset, limit: limit)
            let days = Int64(store.historyPolicy.trashDays)
            return TrashListResult(total: total, rows: memos.map { presenter.row($0, purgedAfterDays: days) })
        }
    }

    /// Rule S2 for a memo back from the trash: it enters the list, selected and shown; an active filter
    /// is cleared.
    public func undelete(_ request: UndeleteRequest) throws(ResponseError) -> MemoResult {
        try translatingErrors {
            try catchUp()
            try discardBlankSelection()
            let change = try store.undelete(id: request.id.description, now: clock(), filter: nil)
            return MemoResult(memo: try showInserted(change, clearingFilter: filter != nil))
        }
    }

    /// Purges the whole trash now; the list does not change.
    public func emptyTrash(_ request: TrashEmptyRequest) throws(ResponseError) -> TrashEmptyResult {
        try translatingErrors { TrashEmptyResult(purged: try store.purgeTrash(deletedBefore: nil)) }
    }
}

extension MemoPresenter {
    public func row(_ info: VersionInfo) -> VersionRow {
        let origin = info.author.map { VersionOrigin(rawValue: $0.kind.rawValue) ?? .unknown } ?? .unknown
        return VersionRow(
            version: info.number, modifiedAt: Timestamp(milliseconds: info.savedAt), displayDate: displayDate(info.savedAt),
            origin: origin, device: info.author?.device, title: title(info.title), size: info.size)
    }

    public func row(_ memo: TrashedMemo, purgedAfterDays days: Int64) -> TrashRow {
        TrashRow(
            id: MemoID(memo.id)!, title: title(memo.title), preview: memo.preview,
            deletedAt: Timestamp(milliseconds: memo.trashedAt), displayDate: displayDate(memo.trashedAt),
            purgeAt: Timestamp(milliseconds: memo.trashedAt + days * HistoryPolicy.dayMilliseconds))
    }
}
