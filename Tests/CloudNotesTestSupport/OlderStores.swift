import Foundation
import GRDB

// MARK: - Stores of older versions

/// The store file at `path` (by default a new one, its folder made) brought to `migrator`'s `version` (by
/// default its last), then filled by `fill` in one transaction: a store as an older version of CloudNotes
/// left it. The file is closed again on return, for a store to open; its path is returned.
@discardableResult
public func writeStoreFile(at path: String = temporaryStorePath(), migratedBy migrator: DatabaseMigrator,
                           upTo version: String? = nil, _ fill: (Database) throws -> Void) throws -> String {
    try createFolder(of: path)
    let queue = try DatabaseQueue(path: path)
    if let version {
        try migrator.migrate(queue, upTo: version)
    } else {
        try migrator.migrate(queue)
    }
    try queue.write(fill)
    return path
}
