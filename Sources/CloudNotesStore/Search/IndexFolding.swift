import Foundation
import GRDB

// MARK: - Case, as the index folds it

/// How the trigram index folds case, character for character, for every check that reads a text
/// instead of asking the index: a search of the memos not yet indexed, of short queries, and the check
/// of one changed memo under a filter. Were they to fold otherwise (`String.lowercased()` leaves a
/// final ς, µ and ſ alone, which the index folds to σ, μ and s, and lower-cases İ and Cherokee, which
/// it does not), a memo would match or not depending on whether the index holds it yet.
///
/// The folds are SQLite's own, read from its tokenizer once a process (`derivedTable`): each
/// character is one character folded, and only characters with case change. SQLite 3.40's tables
/// predate some scripts (Cherokee, Georgian capitals, Osage, Adlam): it folds none of their letters,
/// and so neither does a search. (SQLite also reads U+FFFE and U+FFFF as U+FFFD; queries that hold any
/// of the three never ask the index, and the table leaves the two out, so they match only themselves.)
enum IndexFolding {
    // MARK: The table

    /// The fold of every character the index changes (about 1,000).
    static let table: [Unicode.Scalar: Unicode.Scalar] = {
        do {
            return try derivedTable(of: candidates)
        } catch {
            // The store's own index is made with the same tokenizer: without it no store opens.
            preconditionFailure("SQLite's trigram tokenizer is unavailable: \(error)")
        }
    }()

    /// The characters the index could fold: those with case (case folding is stable across Unicode
    /// versions, so SQLite's older tables fold no other), all below U+20000 (a test asks every
    /// character, and compares). Folding alone would miss U+1FBE, which Swift does not count as changed
    /// by it and SQLite folds to ι.
    static var candidates: [Unicode.Scalar] {
        (UInt32(1)..<0x20000).compactMap { value in
            guard let scalar = Unicode.Scalar(value),
                  scalar.properties.changesWhenCaseFolded || scalar.properties.changesWhenCaseMapped
            else { return nil }
            return scalar
        }
    }

    /// What the trigram tokenizer folds each of `scalars` to, those it changes: they are indexed as one
    /// text, and the first character of the trigram at each offset is the fold of the character there.
    static func derivedTable(of scalars: [Unicode.Scalar]) throws -> [Unicode.Scalar: Unicode.Scalar] {
        let queue = try DatabaseQueue()
        return try queue.write { db in
            try db.execute(sql: """
                CREATE VIRTUAL TABLE folds USING fts5(text, tokenize = 'trigram');
                CREATE VIRTUAL TABLE fold_instances USING fts5vocab(folds, instance);
                """)
            var text = String.UnicodeScalarView(scalars)
            text.append(contentsOf: ["\u{4E00}", "\u{4E00}"])  // so that the last ones begin a trigram
            try db.execute(sql: "INSERT INTO folds(text) VALUES (?)", arguments: [String(text)])
            var table: [Unicode.Scalar: Unicode.Scalar] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT term, offset FROM fold_instances")
            while let row = try rows.next() {
                let term: String = row[0], offset: Int = row[1]
                guard offset < scalars.count, let folded = term.unicodeScalars.first else { continue }
                // Not U+FFFE and U+FFFF read as U+FFFD: no case of theirs (see above).
                if folded != scalars[offset], folded != "\u{FFFD}" { table[scalars[offset]] = folded }
            }
            return table
        }
    }

    /// For each character, the other characters the index folds into it.
    private static let preimages: [Unicode.Scalar: [Unicode.Scalar]] =
        Dictionary(grouping: table.keys, by: { table[$0]! })

    // MARK: Folding

    static func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar { table[scalar] ?? scalar }

    static func fold(_ string: String) -> String {
        // ASCII folds alone (nothing beyond it is asked about): the table is not needed, nor built.
        if string.utf8.allSatisfy({ $0 < 0x80 }) { return string.lowercased() }
        var folded = String.UnicodeScalarView()
        folded.append(contentsOf: string.unicodeScalars.lazy.map(fold))
        return String(folded)
    }

    /// `text` (UTF-8) folded, as UTF-8: ASCII a byte at a time, every other character through the table.
    static func folded(_ text: Data) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        for scalar in String(decoding: text, as: UTF8.self).unicodeScalars {
            if scalar.isASCII {
                let byte = UInt8(scalar.value)
                result.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            } else {
                result.append(contentsOf: UTF8.encode(fold(scalar))!)
            }
        }
        return result
    }

    /// The characters that fold to `scalar`: itself unless it folds to another, and every character
    /// folded into it.
    static func charactersFolding(to scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        (table[scalar] == nil ? [scalar] : []) + (preimages[scalar] ?? [])
    }

    /// Whether folding leaves every character of `query` alone and folds no other character into one
    /// of them: a byte search then finds what the index finds.
    static func isFoldFree(_ query: String) -> Bool {
        query.unicodeScalars.allSatisfy { scalar in
            // In ASCII only letters fold, or are folded into (KELVIN SIGN, LONG S).
            scalar.isASCII ? !scalar.properties.isAlphabetic : charactersFolding(to: scalar) == [scalar]
        }
    }

    // MARK: ASCII queries

    /// The characters outside ASCII that the index folds into ASCII letters: KELVIN SIGN to k, LONG S
    /// to s. `LIKE` and `lower()`, which fold ASCII alone, need a second look at texts that hold them.
    static let kelvinSign: [UInt8] = Array("\u{212A}".utf8)
    static let longS: [UInt8] = Array("\u{017F}".utf8)

    /// Whether an ASCII query holds a letter that the index also folds a character outside ASCII into.
    static func needsSecondLook(_ query: String) -> Bool {
        query.utf8.contains { $0 | 0x20 == UInt8(ascii: "k") || $0 | 0x20 == UInt8(ascii: "s") }
    }

    /// Whether `text` holds a KELVIN SIGN or a LONG S and, folded, the folded ASCII `query`: what
    /// `LIKE` and `lower()` miss. False for every other text, which they read right.
    static func holdsThroughKelvinOrLongS(_ text: Data, _ query: Data) -> Bool {
        guard CaselessPattern.holds(text, kelvinSign) || CaselessPattern.holds(text, longS) else { return false }
        return CaselessPattern.holds(folded(text), folded(query))
    }

    /// `cloudnotes_kelvin_long_s(text, query)`: `holdsThroughKelvinOrLongS`, for SQL.
    static let secondLook = DatabaseFunction("cloudnotes_kelvin_long_s", argumentCount: 2, pure: true) { values in
        guard let text = values[0].utf8Bytes, let query = values[1].utf8Bytes else { return false }
        return holdsThroughKelvinOrLongS(text, query)
    }
}

extension DatabaseValue {
    /// A text's or a blob's bytes; nil for anything else.
    var utf8Bytes: Data? {
        switch storage {
        case .blob(let data): data
        case .string(let string): Data(string.utf8)
        default: nil
        }
    }
}
