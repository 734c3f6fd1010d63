import Foundation
import GRDB

// MARK: - Search filter

/// Memos whose text contains `query`, case-insensitively.
///
/// Queries of three characters or more go through the trigram full-text index. Shorter ones cannot
/// (a trigram needs three characters), and SQLite 3.40 returns no rows for a 1–2 character non-ASCII
/// `LIKE` against a trigram table, so they scan the memo table itself: `LIKE` for ASCII (which folds
/// ASCII case), `instr` for caseless text such as Korean, and a Swift case-folding function otherwise.
public struct SearchFilter: Sendable, Hashable {
    public let query: String

    /// Nil for an empty query: an empty filter is no filter.
    public init?(_ query: String) {
        guard !query.isEmpty else { return nil }
        self.query = query
    }

    /// Whether the query is long enough for the trigram index (and free of NUL, which SQLite's text
    /// handling would cut the pattern at).
    var usesIndex: Bool { query.unicodeScalars.count >= 3 && !containsNUL }

    var containsNUL: Bool { query.utf8.contains(0) }

    /// The FTS5 query for the trigram index: the query as one quoted phrase. Nil when the index
    /// cannot answer the query (shorter than a trigram, or holding a NUL).
    var indexPhrase: String? {
        usesIndex ? "\"" + query.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : nil
    }

    /// An SQL condition, true for memos whose own text holds the query: what a search checks for
    /// the memos the index does not hold (see `MemoStore.matches`).
    var textCondition: SQL {
        if containsNUL {
            // Bound as bytes: text arguments end at the first NUL.
            return "cloudnotes_contains(memo.text, \(Data(query.utf8)))"
        }
        if query.unicodeScalars.allSatisfy(\.isASCII) {
            let escaped = query.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            return "CAST(memo.text AS TEXT) LIKE \("%" + escaped + "%") ESCAPE '\\'"
        }
        if query.lowercased() == query.uppercased() {
            return "instr(memo.text, \(query)) > 0"  // no letter with a case (Korean, digits): a plain byte search
        }
        return "cloudnotes_contains(memo.text, \(query))"
    }

    /// An SQL condition on `memo`, true for the memos that match: through the index for the memos it
    /// holds, through their text for the others.
    var condition: SQL {
        guard let indexPhrase else { return textCondition }
        return """
            (CASE WHEN memo.indexed THEN memo.localID IN (SELECT rowid FROM memo_fts WHERE memo_fts MATCH \(indexPhrase)) \
            ELSE \(textCondition) END)
            """
    }

    /// `cloudnotes_contains(text, query)`: whether `text` contains `query`, ignoring case as the trigram
    /// index does (full Unicode case folding, diacritics kept).
    static let caseInsensitiveContains = DatabaseFunction("cloudnotes_contains", argumentCount: 2, pure: true) { values in
        func decode(_ value: DatabaseValue) -> String? {
            Data.fromDatabaseValue(value).map { String(decoding: $0, as: UTF8.self) } ?? String.fromDatabaseValue(value)
        }
        guard let text = decode(values[0]), let query = decode(values[1]) else { return false }
        // Byte search over the lower-cased UTF-8: Foundation's `range(of:)` and `contains` stop reading the
        // query at a NUL.
        return text.lowercased().utf8.firstRange(of: query.lowercased().utf8) != nil
    }
}
