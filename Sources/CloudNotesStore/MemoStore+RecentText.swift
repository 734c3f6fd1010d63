import Synchronization

// MARK: - The text written last

/// The text of the memo this process changed last, kept so that the next keystroke's change need not
/// read (and validate as UTF-8) the whole text again: for a long memo, most of an edit's cost.
///
/// It is keyed by the row and its `seq`. A row's `seq` grows with every change to it, whatever process
/// makes it, so a row still at the remembered `seq` holds exactly the remembered bytes. It is taken
/// only after the commit: a rolled-back change's `seq` may be handed out again, for other bytes.
struct RecentText: Sendable {
    /// Longer texts are not kept: the memory would outweigh the saving.
    static let maxBytes = 1 << 20

    let localID: Int64
    let seq: Int64
    let text: String
}

extension MemoStore {
    /// Remembers `memo`'s text as the one written last (call after its change committed).
    func rememberText(of memo: StoredMemo) {
        guard let localID = memo.localID else { return }
        let recent = memo.text.utf8.count <= RecentText.maxBytes
            ? RecentText(localID: localID, seq: memo.seq, text: memo.text) : nil
        recentText.withLock { $0 = recent }
    }
}
