import GRDB

// MARK: - Search filter

/// Memos whose text contains `query`, case-insensitively.
///
/// Queries of three characters or more go through the trigram full-text index. Shorter ones cannot
/// (a trigram needs three characters), and SQLite 3.40 returns no rows for a 1–2 character non-ASCII
/// `LIKE` against a trigram table, so they scan the memo table itself: `LIKE` for ASCII (which folds
/// ASCII case) and `instr` over the query's case variants otherwise.
public struct SearchFilter: Sendable, Hashable {
    public let query: String

    /// Nil for an empty query: an empty filter is no filter.
    public init?(_ query: String) {
        guard !query.isEmpty else { return nil }
        self.query = query
    }

    /// Whether the query is long enough for the trigram index.
    var usesIndex: Bool { query.unicodeScalars.count >= 3 }

    /// An SQL condition on the `memo` table that is true for the matching memos.
    var condition: SQL {
        if usesIndex {
            let phrase = "\"" + query.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            return "memo.localID IN (SELECT rowid FROM memo_fts WHERE memo_fts MATCH \(phrase))"
        }
        if query.unicodeScalars.allSatisfy(\.isASCII) {
            let escaped = query.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%")
                .replacingOccurrences(of: "_", with: "\\_")
            return "CAST(memo.text AS TEXT) LIKE \("%" + escaped + "%") ESCAPE '\\'"
        }
        let variants = Array(Set([query, query.lowercased(), query.uppercased(), query.capitalized]))
        var condition: SQL = "(0"
        for variant in variants.sorted() {
            condition += " OR instr(memo.text, \(variant)) > 0"
        }
        return condition + ")"
    }
}
