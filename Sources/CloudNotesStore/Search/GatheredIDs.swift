import Foundation
import GRDB
import GRDBSQLite

// MARK: - A query's ids in one value

/// `cloudnotes_gather(x)`: an SQL aggregate that gathers its integer arguments, in the order the rows
/// come, into one BLOB of native-endian 64-bit integers; an empty BLOB for no row.
///
/// A lookup that steps each matching rowid out to its caller pays SQLite's return per row, for each
/// of a common term's thousands of matches; gathered by this aggregate, they cost hardly more than
/// counting them. Written against SQLite's C API, since GRDB's aggregates make an array of values for
/// every row.
enum GatheredIDs {
    static let functionName = "cloudnotes_gather"

    /// What the aggregate holds between rows, in SQLite's aggregate context, which SQLite zeroes: no
    /// buffer, nothing gathered.
    private struct Gathered {
        var values: UnsafeMutablePointer<Int64>?
        var count: Int
        var capacity: Int
    }

    /// Adds the aggregate to the connection of `db`.
    static func register(on db: Database) throws {
        guard let connection = db.sqliteConnection else { return }
        let code = sqlite3_create_function_v2(
            connection, functionName, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, nil,
            { context, _, arguments in
                guard let context, let arguments else { return }
                guard let raw = sqlite3_aggregate_context(context, Int32(MemoryLayout<Gathered>.size)) else {
                    sqlite3_result_error_nomem(context)
                    return
                }
                let gathered = raw.bindMemory(to: Gathered.self, capacity: 1)
                if gathered.pointee.count == gathered.pointee.capacity {
                    let capacity = max(1024, gathered.pointee.capacity * 2)
                    guard let grown = realloc(gathered.pointee.values, capacity * MemoryLayout<Int64>.stride) else {
                        sqlite3_result_error_nomem(context)
                        return
                    }
                    gathered.pointee.values = grown.bindMemory(to: Int64.self, capacity: capacity)
                    gathered.pointee.capacity = capacity
                }
                gathered.pointee.values?[gathered.pointee.count] = sqlite3_value_int64(arguments[0])
                gathered.pointee.count += 1
            },
            { context in
                // Also called after a failed step and for no row at all (no context made then).
                guard let context else { return }
                guard let raw = sqlite3_aggregate_context(context, 0),
                      case let gathered = raw.bindMemory(to: Gathered.self, capacity: 1).pointee,
                      let values = gathered.values
                else {
                    sqlite3_result_zeroblob(context, 0)
                    return
                }
                // SQLite frees the buffer when it is done with the value.
                sqlite3_result_blob64(context, values, sqlite3_uint64(gathered.count * MemoryLayout<Int64>.stride)) { free($0) }
            },
            nil)
        guard code == SQLITE_OK else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code), message: "cannot add \(functionName)")
        }
    }

    /// The integers a column of `cloudnotes_gather` holds, in order.
    static func values(_ row: SteppedRow, column: Int32) -> [Int64] {
        guard let bytes = sqlite3_column_blob(row.handle, column) else { return [] }
        let count = Int(sqlite3_column_bytes(row.handle, column)) / MemoryLayout<Int64>.stride
        // Copied byte by byte: SQLite promises no alignment for a BLOB's bytes.
        return [Int64](unsafeUninitializedCapacity: count) { buffer, initialized in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(
                from: UnsafeRawBufferPointer(start: bytes, count: count * MemoryLayout<Int64>.stride))
            initialized = count
        }
    }
}

extension Statement {
    /// The integers the statement's one row gathers in its first column with `cloudnotes_gather`.
    func gatheredInt64s(arguments: StatementArguments = []) throws -> [Int64] {
        try withFirstRow(arguments: arguments) { GatheredIDs.values($0, column: 0) } ?? []
    }
}
