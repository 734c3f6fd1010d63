import CloudNotesProtocol
import Foundation

// MARK: - A file written once

/// A new file, created exclusively and written in order; synced to disk before it is closed, or with its
/// folder afterwards (`ExportFolder.syncFiles`).
final class NewFile {
    private let handle: FileHandle

    /// Creates the file at `path`; a failure is an export failure of `target`, the file or folder the
    /// user named, and its reason starts with `name` when given (a file of a folder being exported).
    init(path: String, for target: String, naming name: String? = nil) throws(ResponseError) {
        let descriptor = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o666)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw .exportFailed(name.map { "\($0): \(reason)" } ?? reason, path: target)
        }
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

    /// Closes the file, leaving its sync to `ExportFolder.syncFiles` where that syncs the files' data;
    /// elsewhere syncs it first.
    func finishLeavingSyncToFolder() throws {
        if ExportFolder.syncsFilesData {
            try handle.close()
        } else {
            try finish()
        }
    }
}
