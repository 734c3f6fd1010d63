import Foundation
import GRDB

// MARK: - An encrypted remote's key

extension MemoStore {
    /// The data key of the encrypted remote this store syncs with, once a passphrase opened it here.
    public func syncKey() throws -> Data? {
        try writer.read { db in try Data.fetchOne(db, sql: "SELECT syncKey FROM syncState") }
    }

    /// Keeps `key` as the data key of `remote`, unless the store's remote changed meanwhile; false then.
    ///
    /// The store's files are made readable by their owner alone first (mode 0600): the key opens every
    /// memo on the remote. SQLite gives a log or shared-memory file made later the store file's mode.
    public func setSyncKey(_ key: Data, forRemote remote: String) throws -> Bool {
        if let path {
            for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
                guard chmod(file, 0o600) == 0 else {
                    throw StoreError.writeFailed("cannot make \(file) private to its owner (errno \(errno)), so the key is not kept")
                }
            }
        }
        return try write { db in
            try db.execute(sql: "UPDATE syncState SET syncKey = ? WHERE remote = ?", arguments: [key, remote])
            return db.changesCount > 0
        }
    }
}
