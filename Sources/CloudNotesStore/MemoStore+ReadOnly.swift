import Foundation
import GRDB

// MARK: - A store that cannot be written

extension MemoStore {
    /// Whether this process may write the store: the file, and its folder, which holds the write-ahead log.
    static func canWrite(at path: String) -> Bool {
        let folder = (path as NSString).deletingLastPathComponent
        return access(path, W_OK) == 0 && access(folder.isEmpty ? "." : folder, W_OK) == 0
    }

    /// Opens the store read-only, refusing one that needs a schema upgrade (which cannot be written).
    static func openReadOnly(at path: String, configuration: Configuration) throws -> DatabaseQueue {
        var configuration = configuration
        configuration.readonly = true
        // On a read-only file system nothing can change the file, so SQLite may take it as immutable.
        // Otherwise, a store in WAL mode without its shared-memory file is read through a private copy
        // of it, which makes every transaction look like another process's commit (and the list reset).
        let name = isOnReadOnlyFileSystem(path) ? immutableURI(path) : path
        let queue = try DatabaseQueue(path: name, configuration: configuration)
        try checkSchemaVersion(of: queue, path: path)
        guard try queue.read({ try migrator.hasCompletedMigrations($0) }) else {
            throw StoreError.readOnlyNeedsUpgrade(path: path)
        }
        return queue
    }

    private static func isOnReadOnlyFileSystem(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && info.f_flag & UInt(ST_RDONLY) != 0
    }

    /// `path` as an SQLite URI filename with `immutable=1` (the system SQLite accepts URI filenames).
    private static func immutableURI(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?immutable=1"
    }
}
