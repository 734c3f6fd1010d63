import CloudNotesJSON
import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesStore
import Foundation

// MARK: - Export

/// Writes every live memo to a JSON file or a folder of Markdown files, never over an existing one
/// unless asked to.
public struct MemoExporter: Sendable {
    let store: MemoStore

    public init(store: MemoStore) { self.store = store }

    /// The JSON file is written in pieces of about this size.
    static let chunkBytes = 1 << 20

    /// Exports and returns how many memos were written; `progress` gets (written, total).
    public func export(
        _ request: ExportRequest, isCancelled: @Sendable () -> Bool, progress: (Int, Int) -> Void
    ) throws(ResponseError) -> ExportResult {
        // Taken literally: a relative path is relative to the server's working directory, nothing is expanded.
        let url = URL(fileURLWithPath: request.path).standardizedFileURL
        let overwrite = request.overwrite ?? false
        do {
            let total = try store.count(filter: nil)
            let written: Int
            switch request.format {
            case .json:
                written = try exportJSON(to: url, overwrite: overwrite, total: total, isCancelled: isCancelled, progress: progress)
            case .markdown:
                written = try exportMarkdown(to: url, overwrite: overwrite, total: total, isCancelled: isCancelled, progress: progress)
            }
            return ExportResult(exported: written, path: url.path)
        } catch let error as ResponseError {
            throw error
        } catch StoreError.cancelled {
            throw .cancelled
        } catch {
            throw .exportFailed((error as NSError).localizedDescription, path: url.path)
        }
    }

    /// Writes the JSON file entry by entry as the memos are read, so that memory holds one batch of
    /// memos, not the store: built whole, the file took many times the memory of its text.
    private func exportJSON(
        to url: URL, overwrite: Bool, total: Int, isCancelled: @Sendable () -> Bool, progress: (Int, Int) -> Void
    ) throws -> Int {
        if !overwrite, FileManager.default.fileExists(atPath: url.path) {
            throw ResponseError.exportFailed("the file exists (pass overwrite: true to replace it)", path: url.path)
        }
        // Written beside the target and moved into place, so a reader never sees half a file.
        let temporary = url.deletingLastPathComponent().appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        let folder = try ExportFolder(path: url.deletingLastPathComponent().path, for: url.path)
        let file = try NewFile(path: temporary.path, for: url.path)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let written = try writeJSON(total: total, isCancelled: isCancelled, progress: progress, to: file.write)
        // On disk before it takes the target's name: after a crash, the old file or the whole new one.
        try file.finish()
        if overwrite {
            // rename(2) replaces the old file in one step: a reader sees the old file or the new one.
            if rename(temporary.path, url.path) != 0 {
                throw ResponseError.exportFailed(String(cString: strerror(errno)), path: url.path)
            }
        } else {
            // link(2) fails rather than replace a file that appeared meanwhile.
            if link(temporary.path, url.path) != 0 {
                throw ResponseError.exportFailed(String(cString: strerror(errno)), path: url.path)
            }
            // Gone before the folder is synced, or a power cut could bring the temporary name back.
            unlink(temporary.path)
        }
        // The answer says the file is there: after a power cut too.
        try folder.syncNames()
        return written
    }

    /// Writes every live memo, newest first, as the export's JSON array, a piece at a time to `write`:
    /// to a file, or to stdout (`cloudnotes export -`). Returns how many memos were written.
    public func writeJSON(
        total: Int? = nil, isCancelled: @Sendable () -> Bool, progress: (Int, Int) -> Void, to write: ([UInt8]) throws -> Void
    ) throws -> Int {
        let total = try total ?? store.count(filter: nil)
        var array = PrettyJSONArray()
        try write(PrettyJSONArray.opening)
        var chunk: [UInt8] = []
        try store.forEachMemo(batchSize: 100) { batch in
            if isCancelled() { throw StoreError.cancelled }
            for memo in batch {
                let derived = MemoText(memo.text)
                let entry = ImportEntry(
                    title: derived.title, body: derived.body, lastModified: memo.modifiedAt / 1000, text: memo.text)
                try array.append(entry.json(id: MemoID(memo.id)), to: &chunk)
                if chunk.count >= Self.chunkBytes {
                    try write(chunk)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            progress(array.count, total)
        }
        try write(chunk)
        try write(PrettyJSONArray.closing)
        return array.count
    }

    private func exportMarkdown(
        to url: URL, overwrite: Bool, total: Int, isCancelled: @Sendable () -> Bool, progress: (Int, Int) -> Void
    ) throws -> Int {
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) {
            guard overwrite, isFolder.boolValue else {
                throw ResponseError.exportFailed("the path exists (pass overwrite: true to write into an existing folder)", path: url.path)
            }
        } else {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        }
        let folder = try ExportFolder(path: url.path, for: url.path)
        var usedNames: Set<String> = []
        var written = 0
        try store.forEachMemo { batch in
            if isCancelled() { throw StoreError.cancelled }
            for memo in batch {
                let base = FileName.safe(MemoText(memo.text).title)
                var name = base + ".md"
                var counter = 2
                while usedNames.contains(name.lowercased()) {
                    name = "\(base) \(counter).md"
                    counter += 1
                }
                usedNames.insert(name.lowercased())
                let file = url.appendingPathComponent(name)
                if overwrite {
                    // Replaced in one step, synced first: after a crash, the old file or the new one.
                    try Data(memo.text.utf8).write(to: file, options: [.atomic])
                } else {
                    // In a folder made just now; synced with all the others at the end.
                    let newFile = try NewFile(path: file.path, for: url.path, naming: name)
                    try newFile.write(Array(memo.text.utf8))
                    try newFile.finishLeavingSyncToFolder()
                }
                let date = Date(timeIntervalSince1970: Double(memo.modifiedAt) / 1000)
                try? FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: file.path)
                written += 1
            }
            progress(written, total)
        }
        // The answer says the files are there: after a power cut too.
        try folder.syncFiles()
        return written
    }
}
