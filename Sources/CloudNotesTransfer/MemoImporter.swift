import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesStore
import Foundation
import Synchronization

// MARK: - Import

/// Reads memos in the original app's format and adds them to the store, all or nothing.
public struct MemoImporter: Sendable {
    let store: MemoStore

    /// Entries stored per transaction, at most…
    static let chunkSize = 1000
    /// … and of a file, about this many bytes (at least one entry): an import holds `chunksAhead + 2`
    /// chunks at most (the one written, those read ahead, and the one written before until the reading
    /// thread lets go of it), whatever the memos' lengths.
    /// 256 KiB: read ahead, chunks of 1 MiB raised an import's peak memory by megabytes; these cost it
    /// only a little more time in commits.
    static let chunkBytes = 1 << 18
    /// Chunks read ahead of the one written, at most (see `ReadAhead`): with one, the reader and the
    /// writer waited for each other on most chunks.
    static let chunksAhead = 4

    public init(store: MemoStore) { self.store = store }

    /// Imports the entries of a `memo/import` request, a chunk at a time, and returns how many.
    ///
    /// A file is read as it is stored, in constant memory, the next chunks read (`ReadAhead`) while
    /// one is written. Nothing shows before the last entry is in: a malformed entry (the error names its
    /// index), a cancellation or a failure removes what was stored. `progress` gets the work done and
    /// the work to do (entries, or for a file, bytes) and a message.
    public func run(
        _ request: ImportRequest, isCancelled: @escaping @Sendable () -> Bool,
        progress: @escaping @Sendable (_ done: Int, _ total: Int, _ message: String) -> Void
    ) throws(ResponseError) -> Int {
        let chunks = ReadAhead(label: "cloudnotes.import-reader", depth: Self.chunksAhead, try Self.chunks(of: request))
        defer { chunks.stop() }
        var work = (done: 0, total: 0)
        // The chunk stored last, given back to the reading thread, which allocated its memos.
        var stored: Chunk?
        do {
            return try store.importMemos(
                isCancelled: isCancelled,
                nextChunk: {
                    if let spent = stored.take() { chunks.giveBack(spent) }
                    guard let chunk = try chunks.next() else { return [] }
                    work = (chunk.done, chunk.total)
                    stored = chunk
                    return chunk.memos
                },
                didStore: { imported in
                    progress(work.done, work.total, request.path == nil ? "\(imported) of \(work.total)" : "\(imported) memos read")
                })
        } catch {
            throw ResponseError.from(error, presenter: MemoPresenter())
        }
    }

    /// Some memos to store, and how far the import is once they are.
    struct Chunk: Sendable {
        var memos: [MemoStore.NewMemo]
        /// Entries read so far (or for a file, bytes), and the whole.
        var done: Int
        var total: Int
    }

    private static func newMemo(from entry: ImportEntry) -> MemoStore.NewMemo {
        MemoStore.NewMemo(text: entry.memoText, modifiedAt: entry.lastModified * 1000)
    }

    /// The request's entries, a chunk at a time (`chunkSize` entries, and of a file `chunkBytes`), until nil.
    private static func chunks(of request: ImportRequest) throws(ResponseError) -> @Sendable () throws -> Chunk? {
        switch (request.path, request.memos) {
        case (let path?, nil):
            let reader = Mutex(try ImportFileReader(path: path))
            return {
                try reader.withLock { reader throws(ResponseError) in
                    let entries = try reader.next(limit: chunkSize, byteLimit: chunkBytes)
                    guard !entries.isEmpty else { return nil }
                    return Chunk(memos: entries.map(newMemo(from:)), done: reader.bytesRead, total: max(reader.fileSize, reader.bytesRead))
                }
            }
        case (nil, let memos?):
            let remaining = Mutex(memos[...])
            return {
                remaining.withLock { remaining in
                    guard !remaining.isEmpty else { return nil }
                    let entries = remaining.prefix(chunkSize)
                    remaining = remaining.dropFirst(chunkSize)
                    return Chunk(memos: entries.map(newMemo(from:)), done: memos.count - remaining.count, total: memos.count)
                }
            }
        default:
            throw .invalidParams(param: nil, "give exactly one of 'path' and 'memos'")
        }
    }
}
