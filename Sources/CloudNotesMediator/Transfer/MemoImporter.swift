import CloudNotesProtocol
import CloudNotesStore
import Foundation

// MARK: - Import

/// Reads memos in the original app's format and adds them to the store, all or nothing.
public struct MemoImporter: Sendable {
    let store: MemoStore

    /// Entries stored per transaction.
    static let chunkSize = 1000

    public init(store: MemoStore) { self.store = store }

    /// Imports the entries of a `memo/import` request, a chunk at a time, and returns how many.
    ///
    /// A file is read as it is stored, in constant memory. Nothing shows before the last entry is in:
    /// a malformed entry (the error names its index), a cancellation or a failure removes what was stored.
    /// `progress` gets the work done and the work to do (entries, or for a file, bytes) and a message.
    public func run(
        _ request: ImportRequest, isCancelled: @escaping @Sendable () -> Bool,
        progress: @escaping @Sendable (_ done: Int, _ total: Int, _ message: String) -> Void
    ) throws(ResponseError) -> Int {
        let next: () throws(ResponseError) -> [ImportEntry]
        let done: () -> (Int, Int)
        switch (request.path, request.memos) {
        case (let path?, nil):
            let reader = try ImportFileReader(path: path)
            next = { () throws(ResponseError) in try reader.next(limit: Self.chunkSize) }
            done = { (reader.bytesRead, max(reader.fileSize, reader.bytesRead)) }
        case (nil, let memos?):
            var remaining = memos[...]
            next = {
                defer { remaining = remaining.dropFirst(Self.chunkSize) }
                return Array(remaining.prefix(Self.chunkSize))
            }
            done = { (memos.count - remaining.count, memos.count) }
        default:
            throw .invalidParams(param: nil, "give exactly one of 'path' and 'memos'")
        }
        do {
            return try store.importMemos(
                isCancelled: isCancelled,
                nextChunk: { try next().map { MemoStore.NewMemo(text: $0.memoText, modifiedAt: $0.lastModified * 1000) } },
                didStore: { imported in
                    let (work, total) = done()
                    progress(work, total, request.path == nil ? "\(imported) of \(total)" : "\(imported) memos read")
                })
        } catch {
            throw ResponseError.from(error, presenter: MemoPresenter())
        }
    }
}
