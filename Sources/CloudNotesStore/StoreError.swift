import GRDB

// MARK: - Store errors

/// Why the store refused to open or to change.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file exists but is not a CloudNotes store; it is left untouched.
    case notACloudNotesStore(path: String)
    /// The store was written by a newer CloudNotes whose schema this version does not know.
    case newerSchema(path: String, unknownMigrations: [String])
    /// The store is read-only and written by an older CloudNotes: it needs an upgrade that cannot be written.
    case readOnlyNeedsUpgrade(path: String)
    /// The store is read-only and its write-ahead log holds commits that cannot be read without writing.
    case readOnlyWithUncheckpointedLog(path: String, reason: String)
    case memoNotFound(id: String)
    /// Memo `id` keeps no version `number` (never kept, or pruned).
    case versionNotFound(id: String, number: Int64)
    /// The memo is at `current.version`, not the version the change was based on.
    case versionConflict(current: StoredMemo)
    /// The disk or the file refused the write (full, read-only, I/O error).
    case writeFailed(String)
    case cancelled

    public var description: String {
        switch self {
        case .notACloudNotesStore(let path):
            "\(path) is not a CloudNotes store; it was left untouched"
        case .newerSchema(let path, let migrations):
            "\(path) was written by a newer CloudNotes (schema \(migrations.joined(separator: ", "))); upgrade cloudnotes to open it"
        case .readOnlyNeedsUpgrade(let path):
            "\(path) is read-only and needs an upgrade to this version's schema; make it writable once"
        case .readOnlyWithUncheckpointedLog(let path, let reason):
            "\(path) is read-only and its write-ahead log holds changes that cannot be read without writing (\(reason)); open it once where it is writable"
        case .memoNotFound(let id): "no memo with id \(id)"
        case .versionNotFound(let id, let number): "memo \(id) keeps no version \(number)"
        case .versionConflict(let current): "the memo is at version \(current.version)"
        case .writeFailed(let reason): reason
        case .cancelled: "cancelled"
        }
    }
}

extension StoreError {
    /// The write failure that SQLite's `error` stands for, in words for whoever asked for the change.
    static func writeFailed(_ error: DatabaseError) -> StoreError {
        switch error.resultCode {
        case .SQLITE_FULL: .writeFailed("the disk is full")
        case .SQLITE_READONLY: .writeFailed("the store is read-only")
        case .SQLITE_IOERR: .writeFailed("disk I/O error")
        default: .writeFailed(error.message ?? "\(error.resultCode)")
        }
    }
}
