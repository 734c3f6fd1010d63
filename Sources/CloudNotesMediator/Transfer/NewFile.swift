import CFileSync
import CloudNotesProtocol
import Foundation

// MARK: - A file written once

/// A new file, created exclusively and written in order; synced to disk before it is closed, or with its
/// folder afterwards.
final class NewFile {
    private let handle: FileHandle

    /// Creates the file at `path`; a failure is an export failure of `target`, the file the user named.
    init(path: String, for target: String) throws(ResponseError) {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else { throw .exportFailed(String(cString: strerror(errno)), path: target) }
        handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }

    func write(_ bytes: [UInt8]) throws {
        try handle.write(contentsOf: bytes)
    }

    /// Syncs the file to disk and closes it.
    func finish() throws {
        try handle.synchronize()
        try handle.close()
    }

    /// Closes the file unsynced, for a caller that syncs its whole folder afterwards (`syncFolderOfFiles`).
    func closeUnsynced() throws {
        try handle.close()
    }

    /// Syncs the folder at `path` to disk: the names a `link` or `rename` just gave its files are the
    /// folder's data, which syncing a file does not write. A failure is an export failure of `target`.
    static func syncFolder(_ path: String, for target: String) throws(ResponseError) {
        try sync(folder: path, for: target, with: fsync)
    }

    /// Syncs a folder of new files to disk, their data and their names, with one call: syncing each of
    /// 100,000 files would take a journal commit each (see `cfilesync_file_system` for other systems).
    static func syncFolderOfFiles(_ path: String, for target: String) throws(ResponseError) {
        try sync(folder: path, for: target, with: cfilesync_file_system)
    }

    /// Opens the folder at `path` and calls `call` on it, which returns 0 or -1 with `errno` set.
    private static func sync(folder path: String, for target: String, with call: (Int32) -> Int32) throws(ResponseError) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .exportFailed(String(cString: strerror(errno)), path: target) }
        defer { close(descriptor) }
        guard call(descriptor) == 0 else { throw .exportFailed(String(cString: strerror(errno)), path: target) }
    }
}
