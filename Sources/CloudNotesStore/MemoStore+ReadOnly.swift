import Foundation
import GRDB

// MARK: - A store that cannot be written

extension MemoStore {
    /// Whether this process may write the store: the file, and its folder, which holds the write-ahead log.
    static func canWrite(at path: String) -> Bool {
        access(path, W_OK) == 0 && access(folder(of: path), W_OK) == 0
    }

    /// Opens the store read-only, refusing one that needs a schema upgrade (which cannot be written).
    ///
    /// A store whose write-ahead log is absent or empty holds everything in its main file: it is read
    /// as immutable, which needs neither the log nor the shared-memory file that a read-only folder
    /// cannot hold. A store whose log still holds commits (its last writer was killed) can only be read
    /// with the log's shared-memory index; without one, it is refused rather than shown without them.
    /// A read-only store does not follow changes that other processes make (see `hasChangesElsewhere`).
    static func openReadOnly(at path: String, configuration: Configuration) throws -> DatabaseQueue {
        var configuration = configuration
        configuration.readonly = true
        let logSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        let queue: DatabaseQueue
        do {
            queue = try DatabaseQueue(path: logSize == 0 ? immutableURI(path) : path, configuration: configuration)
            try queue.read { db in try checkSchemaVersion(db, path: path) }
        } catch let error as DatabaseError where logSize > 0 {
            throw StoreError.readOnlyWithUncheckpointedLog(path: path, reason: error.message ?? "\(error.resultCode)")
        }
        guard try queue.read({ try migrator.hasCompletedMigrations($0) }) else {
            throw StoreError.readOnlyNeedsUpgrade(path: path)
        }
        return queue
    }

    /// `path` as an SQLite URI filename with `immutable=1` (the system SQLite accepts URI filenames).
    private static func immutableURI(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var allowed = CharacterSet.urlPathAllowed
        allowed.remove(charactersIn: "?#%")
        return "file:" + (absolute.addingPercentEncoding(withAllowedCharacters: allowed) ?? absolute) + "?immutable=1"
    }
}
