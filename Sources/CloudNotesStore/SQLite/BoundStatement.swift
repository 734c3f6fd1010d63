import GRDB
import GRDBSQLite

// MARK: - Writing with parameters bound through SQLite

extension Statement {
    /// Runs the statement once with the parameters that `bind` sets through SQLite's own calls, then
    /// resets it and clears its parameters, so that no text bound in place outlives its buffer.
    ///
    /// For the import's inserts: GRDB's arguments box each value, and a text passed as `Data`
    /// is copied twice (into the `Data`, then by SQLite), every memo's text each time. The statement
    /// must not be observed by a GRDB transaction observer (the store has none).
    func executeOnce(binding bind: (ParameterBinder) -> Void) throws {
        let handle = sqliteStatement
        defer {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
        }
        bind(ParameterBinder(handle: handle))
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else {
            throw DatabaseError(resultCode: ResultCode(rawValue: code),
                                message: String(cString: sqlite3_errmsg(sqlite3_db_handle(handle))), sql: sql)
        }
    }
}

extension Statement {
    /// Runs the statement once, as `executeOnce(binding:)` does, with the UTF-8 of each of `blobs` bound
    /// in place as a BLOB, at the parameter that `parameter` gives for its offset in `blobs`.
    ///
    /// A multi-row INSERT needs every text's bytes at once: each is bound inside the scope of the
    /// previous one's, and the statement runs (and is reset) inside the last.
    func executeOnce(bindingInPlace blobs: [String], at parameter: (Int) -> Int32,
                     binding bind: (ParameterBinder) -> Void) throws {
        try withBlobsBound(blobs, from: 0, at: parameter) { try executeOnce(binding: bind) }
    }

    private func withBlobsBound(_ blobs: [String], from offset: Int, at parameter: (Int) -> Int32,
                                _ body: () throws -> Void) throws {
        guard offset < blobs.count else { return try body() }
        var blob = blobs[offset]
        try blob.withUTF8 { bytes in
            ParameterBinder(handle: sqliteStatement).bindInPlace(bytes, at: parameter(offset))
            try withBlobsBound(blobs, from: offset + 1, at: parameter, body)
        }
    }
}

/// Sets a statement's parameters (numbered from 1) through SQLite's own calls.
struct ParameterBinder {
    let handle: SQLiteStatement

    /// SQLite's `SQLITE_TRANSIENT`: it copies the bytes before the call returns.
    private static let copied = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    /// A text, copied by SQLite (never NULL, also when empty).
    func bind(_ value: String, at index: Int32) {
        var value = value
        _ = value.withUTF8 { bytes in  // a failed bind leaves NULL, which the NOT NULL columns refuse
            // An empty buffer may have no address, which SQLite would take for NULL.
            if let base = bytes.baseAddress, !bytes.isEmpty {
                sqlite3_bind_text(handle, index, base, Int32(bytes.count), Self.copied)
            } else {
                sqlite3_bind_text(handle, index, "", 0, Self.copied)
            }
        }
    }

    /// A BLOB bound in place, not copied: `bytes` must stay valid until the statement is reset (as
    /// `executeOnce` does before it returns). Never NULL, also when empty.
    func bindInPlace(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int32) {
        if let base = bytes.baseAddress, !bytes.isEmpty {
            sqlite3_bind_blob(handle, index, base, Int32(bytes.count), nil)
        } else {
            sqlite3_bind_zeroblob(handle, index, 0)
        }
    }
}
