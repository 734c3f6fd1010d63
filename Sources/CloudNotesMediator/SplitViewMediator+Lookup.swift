import CloudNotesProtocol
import CloudNotesStore

// MARK: - Finding a memo by the start of its id

extension SplitViewMediator {
    /// The one live memo (or one of `set`) whose id starts with `prefix`, as people type ids in a shell (`3f2a9c1e`).
    ///
    /// Case is ignored. Fails with -32602 naming `param` when the prefix is not hex and dashes, when no
    /// memo matches, or when several do (their ids are in the error's data, so the user can pick one).
    public func memoID(matching prefix: String, param: String = "id", among set: MemoStore.MemoSet = .live) throws(ResponseError) -> MemoID {
        let prefix = prefix.lowercased()
        guard !prefix.isEmpty, prefix.utf8.count <= 36,
              prefix.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) || $0 == 0x2D })
        else {
            throw .invalidParams(param: param, "is not a memo id or the start of one (hex digits and dashes): \(prefix)")
        }
        let candidates = try translatingErrors { try store.memoIDs(startingWith: prefix, limit: 10, among: set) }
        switch candidates.count {
        case 0:
            throw ResponseError(
                code: .memoNotFound, message: "No memo's id starts with \(prefix)", data: ["id": .string(prefix)])
        case 1:
            return MemoID(candidates[0])!
        default:
            let shown = candidates.count == 10 ? "10 or more" : "\(candidates.count)"
            throw ResponseError(
                code: .invalidParams, message: "The id \(prefix) is ambiguous: \(shown) memos start with it; give more of it",
                data: ["param": .string(param), "candidates": .array(candidates.map(JSONValue.string))])
        }
    }

    /// The live memo `id` as the presenter shows it, read without selecting it.
    public func memo(_ id: MemoID) throws(ResponseError) -> Memo {
        try translatingErrors {
            try catchUp()
            guard let stored = try store.memo(id: id.description) else { throw ResponseError.memoNotFound(id) }
            return presenter.memo(stored)
        }
    }
}
