import CShims
import CloudNotesProtocol
import Foundation

// MARK: - The folder an export writes into

/// The folder an export writes its files into, open from before the first file until its sync.
///
/// Open that early because Linux's `syncfs(2)` reports the write errors of the file system that came
/// after the descriptor was opened: opened after the files were written, it could miss theirs.
final class ExportFolder {
    /// Whether `syncFiles` writes the files' data too (`syncfs(2)`, Linux), not only their names.
    #if os(Linux)
    static let syncsFilesData = true
    #else
    static let syncsFilesData = false
    #endif

    private let descriptor: Int32
    private let target: String

    /// Opens the folder at `path`; a failure is an export failure of `target`.
    init(path: String, for target: String) throws(ResponseError) {
        descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        self.target = target
        guard descriptor >= 0 else { throw .exportFailed(String(cString: strerror(errno)), path: target) }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Syncs the folder's entries to disk: the names a `link`, `rename` or `unlink` just changed, which
    /// syncing a file does not write.
    func syncNames() throws(ResponseError) {
        guard fsync(descriptor) == 0 else { throw .exportFailed(String(cString: strerror(errno)), path: target) }
    }

    /// Syncs the new files written into the folder, their data and their names, with one call where
    /// `syncsFilesData` (syncing each file took a journal commit of its own);
    /// elsewhere each file was synced as it was closed, and this syncs the names.
    func syncFiles() throws(ResponseError) {
        #if os(Linux)
        let synced = cshims_syncfs(descriptor) == 0
        #else
        let synced = fsync(descriptor) == 0
        #endif
        guard synced else { throw .exportFailed(String(cString: strerror(errno)), path: target) }
    }
}
