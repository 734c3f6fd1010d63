import CloudNotesBytes
import Foundation
import GRDB
import GRDBSQLite

// MARK: - Stepping cached statements through SQLite

/// Steps cached statements through SQLite's own calls: the first row of the few queries that every
/// request runs (a memo by id, the store's data version), and every row of the reads of many rows (the
/// whole list order; a search's matches are gathered inside SQLite instead, see `GatheredIDs`).
///
/// A GRDB cursor builds a dictionary of the statement's column names each time it is made (some
/// 14,000 instructions), and a row read by column name looks each name up in it; the memo lookup
/// itself costs SQLite a fraction of that. Rows read here are read by column index, in the order of
/// the statement's SELECT.
extension Statement {
    /// Binds `arguments`, steps to the first row and hands it to `read`; nil when there is no row.
    /// The statement is reset afterwards, so it ends (and ends its read transaction) at once.
    func withFirstRow<T>(arguments: StatementArguments = [], _ read: (SteppedRow) throws -> T) throws -> T? {
        setUncheckedArguments(arguments)
        let handle = sqliteStatement
        defer { sqlite3_reset(handle) }
        switch sqlite3_step(handle) {
        case SQLITE_ROW:
            return try read(SteppedRow(handle: handle))
        case SQLITE_DONE:
            return nil
        case let code:
            throw stepError(code)
        }
    }

    /// Binds `arguments`, hands every row to `read` in order, then resets the statement.
    ///
    /// For the reads of many rows (the whole list order, a page of the list): GRDB's cursors, generic
    /// over the value's type, looked up type metadata for each row, about a tenth of a search for a
    /// common term.
    func forEachRow(arguments: StatementArguments = [], _ read: (SteppedRow) throws -> Void) throws {
        setUncheckedArguments(arguments)
        let handle = sqliteStatement
        defer { sqlite3_reset(handle) }
        while true {
            switch sqlite3_step(handle) {
            case SQLITE_ROW: try read(SteppedRow(handle: handle))
            case SQLITE_DONE: return
            case let code: throw stepError(code)
            }
        }
    }

    private func stepError(_ code: Int32) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code),
                      message: String(cString: sqlite3_errmsg(sqlite3_db_handle(sqliteStatement))), sql: sql)
    }
}

/// The row a stepped statement is on, read by column index.
struct SteppedRow {
    let handle: SQLiteStatement

    func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }

    func optionalInt64(_ column: Int32) -> Int64? {
        isNull(column) ? nil : int64(column)
    }

    func bool(_ column: Int32) -> Bool {
        int64(column) != 0
    }

    /// A TEXT or BLOB column's bytes as a string, NUL characters included.
    func string(_ column: Int32) -> String {
        // `sqlite3_column_blob` returns the bytes as stored, without the conversion to text that could
        // stop at a NUL; the count is asked after the pointer, as SQLite's documentation requires.
        guard let bytes = sqlite3_column_blob(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(storedUTF8: UnsafeBufferPointer(start: bytes.assumingMemoryBound(to: UInt8.self), count: count))
    }

    func optionalString(_ column: Int32) -> String? {
        isNull(column) ? nil : string(column)
    }
}

// MARK: - Text read back

extension String {
    /// A string of the UTF-8 bytes SQLite holds, ill-formed sequences replaced as `String(decoding:as:)`
    /// replaces them.
    ///
    /// The store only writes well-formed text, but a file edited by other hands may hold anything, so the
    /// bytes are checked all the same: by `UTF8Validation` (sixteen bytes a step), where the standard
    /// library's check walks a scalar at a time. That check was the largest single cost of reading a
    /// page of the list (7% of the server's samples) and of reading back a long memo of Korean text.
    init(storedUTF8 bytes: UnsafeBufferPointer<UInt8>) {
        if UTF8Validation.isValid(UnsafeRawBufferPointer(bytes)) {
            self.init(copying: UTF8Span(unchecked: bytes.span))
        } else {
            self.init(decoding: bytes, as: UTF8.self)
        }
    }

    /// A string of the UTF-8 bytes of a BLOB column read through GRDB, as `init(storedUTF8:)` makes it.
    init(storedUTF8 data: Data) {
        self = data.withUnsafeBytes { String(storedUTF8: $0.bindMemory(to: UInt8.self)) }
    }
}
