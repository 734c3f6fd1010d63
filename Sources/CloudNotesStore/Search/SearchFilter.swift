import Foundation
import GRDB

// MARK: - Search filter

/// Memos whose text contains `query`, case-insensitively.
///
/// Queries of three characters or more go through the trigram full-text index as a phrase. Shorter
/// ones go through it too: every occurrence of them begins a trigram (the index holds each text
/// followed by two `indexSentinel`s), so the memos that hold them are the memos that hold an index term
/// beginning with them (`indexPrefix`). Where the index cannot answer, or would answer slower, the
/// memo table is read (SQLite 3.40 returns no rows for a 1–2 character non-ASCII `LIKE` against a
/// trigram table).
///
/// Case is folded as the index folds it wherever a query is checked against a text (`IndexFolding`),
/// so that the index, a search that reads texts and the check of one memo agree.
public struct SearchFilter: Sendable, Hashable {
    public let query: String

    /// What the full-text index holds twice after each text (migration "v4-short-term-index"): U+FDD0,
    /// a noncharacter. A query that holds it reads the text directly.
    static let indexSentinel = Unicode.Scalar(0xFDD0)!  // (Swift takes no noncharacter in a literal)

    /// Nil for an empty query: an empty filter is no filter.
    public init?(_ query: String) {
        guard !query.isEmpty else { return nil }
        self.query = query
    }

    /// Filters are equal when their queries hold the same bytes: searches match bytes, and `String`'s
    /// `==` takes a decomposed "회" (conjoining jamo) for the composed one, so a search for one was
    /// answered with the other's matches, kept in memory.
    public static func == (lhs: SearchFilter, rhs: SearchFilter) -> Bool {
        lhs.query.hasSameBytes(as: rhs.query)
    }

    public func hash(into hasher: inout Hasher) {
        for byte in query.utf8 { hasher.combine(byte) }
    }

    /// Whether the query is long enough for a phrase of the trigram index, and fit for it.
    var usesIndex: Bool { query.unicodeScalars.count >= 3 && fitsIndex }

    /// Free of NUL, which SQLite's text handling would cut the pattern at; of the sentinel, which the
    /// index holds after every text; and of U+FFFD, which the index holds for U+FFFE and U+FFFF too
    /// (SQLite reads both as U+FFFD).
    private var fitsIndex: Bool {
        !containsNUL && !query.unicodeScalars.contains { $0 == Self.indexSentinel || (0xFFFD...0xFFFF).contains($0.value) }
    }

    var containsNUL: Bool { query.holdsNUL }

    /// For a query of one or two characters: the prefix of the index terms that begin its occurrences,
    /// the query folded as the index folds its terms. Nil for a longer query, or one unfit for the index.
    var indexPrefix: String? {
        guard query.unicodeScalars.count < 3, fitsIndex else { return nil }
        return IndexFolding.fold(query)
    }

    private var isASCII: Bool { query.unicodeScalars.allSatisfy(\.isASCII) }

    /// The FTS5 query for the trigram index: the query as one quoted phrase. Nil when the index
    /// cannot answer the query as a phrase (shorter than a trigram, or unfit: `fitsIndex`).
    var indexPhrase: String? {
        usesIndex ? "\"" + query.replacingOccurrences(of: "\"", with: "\"\"") + "\"" : nil
    }

    /// An SQL condition, true for memos whose own text holds the query and no NUL: for ASCII it is
    /// `LIKE`, which ends a text at its first NUL (with `IndexFolding`'s second look when the query
    /// holds k or s). `textConditionPastNUL` holds for any text.
    var textCondition: SQL {
        guard !containsNUL, isASCII else { return textConditionPastNUL }
        let escaped = query.replacingOccurrences(of: "\\", with: "\\\\")
            .replacingOccurrences(of: "%", with: "\\%")
            .replacingOccurrences(of: "_", with: "\\_")
        let like: SQL = "CAST(memo.text AS TEXT) LIKE \("%" + escaped + "%") ESCAPE '\\'"
        return IndexFolding.needsSecondLook(query) ? "(\(like) OR cloudnotes_kelvin_long_s(memo.text, \(query)))" : like
    }

    /// An SQL condition, true for memos whose own text holds the query, NULs or not: what a search
    /// checks for the memos the index does not hold (those with a NUL among them, see
    /// `MemoStore.indexPendingMemos`). For ASCII it folds a copy of the text (`lower`, ASCII only,
    /// as `LIKE`), 3.5 times as long as `LIKE` over every memo, so a scan of every memo takes
    /// `textCondition`.
    var textConditionPastNUL: SQL {
        if containsNUL {
            // Bound as bytes: text arguments end at the first NUL.
            return "cloudnotes_contains(memo.text, \(Data(query.utf8)))"
        }
        if isASCII {
            // `lower` folds ASCII alone, as `LIKE`.
            let lowered: SQL = "instr(lower(memo.text), \(query.lowercased())) > 0"
            return IndexFolding.needsSecondLook(query) ? "(\(lowered) OR cloudnotes_kelvin_long_s(memo.text, \(query)))" : lowered
        }
        if IndexFolding.isFoldFree(query) {
            return "instr(memo.text, \(query)) > 0"  // no letter with a case (Korean, digits): a plain byte search
        }
        return "cloudnotes_contains(memo.text, \(query))"
    }

    /// An SQL condition on one row of `memo` whose text holds no NUL, true when it matches: through the
    /// index for a phrase and a memo the index holds, through its text otherwise (for a short query
    /// the index answers, the text condition is the search its prefix lookup amounts to).
    ///
    /// The index is asked about this row alone (`rowid =`): `localID IN (SELECT rowid ... MATCH)` made
    /// SQLite list every match first, thousands for a common term, to check one row.
    var condition: SQL {
        guard let indexPhrase else { return textCondition }
        return """
            (CASE WHEN memo.indexed \
            THEN EXISTS (SELECT 1 FROM memo_fts WHERE memo_fts MATCH \(indexPhrase) AND memo_fts.rowid = memo.localID) \
            ELSE \(textCondition) END)
            """
    }

    /// The largest number of index terms a short query is looked up through; past it, reading every
    /// text costs less (in the benchmark's 100,000 memos, 427 terms begin with "e", and looking them up
    /// took longer than reading every text).
    static let maxPrefixTerms = 256

    /// The most that the numbers of memos each of a short query's terms is found in may add up to, per
    /// memo in the list; past it, reading every text costs less (measured in `bench/FINDINGS.md`).
    static let maxPrefixMatchesPerMemo = 3

    /// Below this many memos, reading every text costs next to nothing either way: the index answers.
    static let fewMemos = 1000

    /// The FTS5 query for the memos the index holds that contain `indexPrefix`: every index term that
    /// begins with it, OR-ed (no indexed text holds NUL, so no term does). Nil when the index cannot
    /// answer, or would answer slower than reading the texts of the list's `memoCount` memos
    /// (`maxPrefixTerms`, `maxPrefixMatchesPerMemo`); `""` when no term begins with it.
    func prefixTermsQuery(_ db: Database, memoCount: Int) throws -> String? {
        guard let indexPrefix else { return nil }
        // The terms from `prefix` up to `prefix` followed by the byte 0xFF, which no UTF-8 character begins
        // with. The table counts each term's memos as it lists it: stopping early saves the rest.
        let rows = try Row.fetchCursor(db.cachedStatement(sql: """
            SELECT term, doc FROM memo_fts_terms WHERE term >= ?1 AND term < ?1 || CAST(X'FF' AS TEXT)
            """), arguments: [indexPrefix])
        let matchLimit = Self.maxPrefixMatchesPerMemo * max(memoCount, Self.fewMemos)
        var terms: [String] = []
        var matches = 0
        while let row = try rows.next() {
            terms.append(row[0])
            matches += row[1] as Int
            guard terms.count <= Self.maxPrefixTerms, matches <= matchLimit else { return nil }
        }
        return terms.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " OR ")
    }

    /// `cloudnotes_contains(text, query)`: whether `text` contains `query`, both folded as the index
    /// folds them (`CaselessPattern`). Either may be text or bytes (a query that holds NUL is bound as
    /// bytes: text arguments end at the first NUL).
    static let caseInsensitiveContains = DatabaseFunction("cloudnotes_contains", argumentCount: 2, pure: true) { values in
        guard let text = values[0].utf8Bytes, let query = values[1].utf8Bytes else { return false }
        return CaselessPattern.pattern(for: query).isFound(in: text)
    }
}
