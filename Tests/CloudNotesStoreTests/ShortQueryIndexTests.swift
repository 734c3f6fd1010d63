import CloudNotesTestSupport
import Foundation
import GRDB
import Testing

@testable import CloudNotesStore

/// Searches of one or two characters, which the trigram index answers by the prefix of its terms
/// (`SearchFilter.indexPrefix`), and the migration that made that possible.
@Suite("Short queries through the index")
struct ShortQueryIndexTests {
    let sentinel = String(SearchFilter.indexSentinel)

    // MARK: - Which queries

    @Test("one or two characters have an index prefix, folded as the index folds; longer or unfit ones do not")
    func indexPrefixes() {
        for query in ["회의", "회", "12", "#", "\"의", "의 ", "me", "k ", "회a", "ä"] {
            #expect(SearchFilter(query)?.indexPrefix == query, "\(query)")
        }
        for (query, prefix) in [("Me", "me"), ("S", "s"), ("Ä", "ä"), ("\u{212A}", "k"), ("\u{017F}", "s"), ("ΣΑ", "σα")] {
            #expect(SearchFilter(query)?.indexPrefix == prefix, "\(query)")
        }
        for query in ["회의록", "mee", "\u{0}", "a\u{0}", sentinel, "회" + sentinel, "\u{FFFD}", "\u{FFFF}"] {
            #expect(SearchFilter(query)?.indexPrefix == nil, "\(query.unicodeScalars.map(\.value))")
        }
        // The sentinel the index holds after every text keeps a phrase out of the index too.
        #expect(SearchFilter("ab" + sentinel)?.indexPhrase == nil)
        #expect(SearchFilter("ab\u{FFFE}")?.indexPhrase == nil)
        #expect(SearchFilter("abc")?.indexPhrase == "\"abc\"")
    }

    @Test("the index query of a short term ORs exactly the index terms that begin with it")
    func prefixTermsQuery() throws {
        let store = try MemoStore()
        for text in ["회의록", "오늘 회의", "회의가 \"길다\"", "회계", "의회"] {
            _ = try store.create(text: text, now: 1, filter: nil)
        }
        try store.indexEverything()
        try store.writer.read { db throws in
            let query = try #require(try SearchFilter("회의")?.prefixTermsQuery(db, memoCount: 5))
            let terms = Set(query.components(separatedBy: " OR "))
            // "회의" at a text's end begins the term of it and the first sentinel.
            #expect(terms == ["\"회의록\"", "\"회의" + sentinel + "\"", "\"회의가\""])
            #expect(try SearchFilter("없음")?.prefixTermsQuery(db, memoCount: 5) == "")
            #expect(try SearchFilter("Ä")?.prefixTermsQuery(db, memoCount: 5) == "")
        }
    }

    @Test("past maxPrefixTerms terms, a short query reads the text instead")
    func prefixTermsFallBack() throws {
        let store = try MemoStore()
        // One memo per following pair: more terms begin with "가" than the limit.
        let syllables = (0..<20).map { String(UnicodeScalar(0xAC00 + 28 * $0)!) }
        var texts: [String] = []
        for first in syllables {
            for second in syllables where texts.count <= SearchFilter.maxPrefixTerms {
                texts.append("가" + first + second)
            }
        }
        for text in texts { _ = try store.create(text: text, now: 1, filter: nil) }
        try store.indexEverything()
        try store.writer.read { db throws in
            #expect(try SearchFilter("가")?.prefixTermsQuery(db, memoCount: texts.count) == nil)
            #expect(try SearchFilter(syllables[1])?.prefixTermsQuery(db, memoCount: texts.count) != nil)
        }
        #expect(try store.count(filter: SearchFilter("가")) == texts.count)
    }

    @Test("a text that holds NUL stays out of the index, which would end it there: what follows is found")
    func textAfterNUL() throws {
        let store = try MemoStore()
        let memo = try store.create(text: "앞\u{0}뒤 끝 after", now: 1, filter: nil).memo
        _ = try store.create(text: "뒤에 없음", now: 2, filter: nil)
        for indexed in [false, true] {
            if indexed { #expect(try store.indexPendingMemos() == 1) }
            // ASCII queries too: `LIKE` ends a text at its first NUL.
            for (query, expected) in [("뒤 끝", 1), ("뒤 ", 1), ("뒤", 2), ("앞\u{0}뒤", 1), ("after", 1), ("AFTER", 1), ("r", 1)] {
                let filter = try #require(SearchFilter(query))
                store.cache.invalidate()  // a new search, not the list kept from the last one
                #expect(try store.count(filter: filter) == expected, "\(query), indexed: \(indexed)")
                #expect(try store.writer.read { db in try store.matches(memo, filter: filter, db) }, "\(query), indexed: \(indexed)")
            }
        }
        #expect(try store.memo(id: memo.id)?.indexed == false)
    }

    // MARK: - What they find

    @Test("a short query finds every memo that holds it, at a text's end and in a one-character text too")
    func shortQueriesMatchTheText() throws {
        let store = try MemoStore()
        // Few characters, so that queries meet texts' ends, whole texts and each other often; among them
        // the two that the index folds into ASCII letters (KELVIN SIGN, LONG S), and a final sigma.
        let alphabet: [Unicode.Scalar] = [
            "회", "의", " ", "1", "\"", "a", "A", "k", "S", "\u{212A}", "\u{017F}", "Σ", "ς",
            SearchFilter.indexSentinel, "\u{FFFD}", "\u{FFFF}",
        ]
        var random = SplitMix64(seed: 0x5EA2C4)
        var texts: [String] = []
        for _ in 0..<400 {
            let length = Int.random(in: 1...6, using: &random)
            var text = String.UnicodeScalarView()
            for _ in 0..<length { text.append(alphabet.randomElement(using: &random)!) }
            texts.append(String(text))
        }
        for text in texts { _ = try store.create(text: text, now: 1, filter: nil) }
        var queries = alphabet.map { String($0) }
        for first in alphabet { for second in alphabet { queries.append(String(first) + String(second)) } }

        func expected(_ query: String) -> Int {
            // Case folded as the index folds it, written out for this alphabet; the rest compares byte for byte.
            func fold(_ text: String) -> [UInt8] {
                Array(text.replacingOccurrences(of: "\u{212A}", with: "k").replacingOccurrences(of: "\u{017F}", with: "s")
                    .replacingOccurrences(of: "Σ", with: "σ").replacingOccurrences(of: "ς", with: "σ")
                    .replacingOccurrences(of: "A", with: "a").replacingOccurrences(of: "S", with: "s").utf8)
            }
            let folded = fold(query)
            return texts.filter { fold($0).firstRange(of: folded) != nil }.count
        }
        for indexed in [false, true] {
            if indexed { try store.indexEverything() }
            for query in queries {
                let filter = try #require(SearchFilter(query))
                store.cache.invalidate()  // a new search, not the list kept from the last one
                #expect(try store.count(filter: filter) == expected(query), "\(query.unicodeScalars.map(\.value)), indexed: \(indexed)")
                if indexed, filter.indexPrefix != nil {
                    // Answered by the index, not by reading the texts.
                    #expect(try store.writer.read { db in try filter.prefixTermsQuery(db, memoCount: texts.count) } != nil)
                }
            }
        }
    }

    @Test("ASCII queries find KELVIN SIGN and LONG S as the letters the index folds them to, indexed or not")
    func lettersFoldedFromBeyondASCII() throws {
        let store = try MemoStore()
        let kelvin = try store.create(text: "0 \u{212A}elvin", now: 1, filter: nil).memo
        let longS = try store.create(text: "Tho\u{017F}e", now: 2, filter: nil).memo
        _ = try store.create(text: "neither", now: 3, filter: nil)
        for indexed in [false, true] {
            if indexed { try store.indexEverything() }
            for (query, expected) in [("KELVIN", kelvin), ("0 k", kelvin), ("k", kelvin), ("OSE", longS), ("os", longS), ("S", longS)] {
                let filter = try #require(SearchFilter(query))
                store.cache.invalidate()  // a new search, not the list kept from the last one
                #expect(try store.page(filter: filter, offset: 0, limit: 10).map(\.id) == [expected.id], "\(query), indexed: \(indexed)")
                let stored = try #require(try store.writer.read { db in try MemoStore.liveMemo(id: expected.id, db) })
                #expect(try store.writer.read { db in try store.matches(stored, filter: filter, db) }, "\(query), indexed: \(indexed)")
            }
        }
    }

    @Test("a short query whose terms are found in more memos than maxPrefixMatchesPerMemo allows reads the texts")
    func prefixTermsFallBackOnMatches() throws {
        let store = try MemoStore()
        // Four terms begin with "a" in each memo: found 4,000 times in 1,000 memos.
        for i in 0..<1000 { _ = try store.create(text: "ab1 ac2 ad3 ae4 \(i)", now: Int64(i), filter: nil) }
        try store.indexEverything()
        try store.writer.read { db throws in
            #expect(SearchFilter.maxPrefixMatchesPerMemo == 3)
            #expect(try SearchFilter("a")?.prefixTermsQuery(db, memoCount: 1000) == nil)
            #expect(try SearchFilter("a")?.prefixTermsQuery(db, memoCount: 2000) != nil)
            #expect(try SearchFilter("ab")?.prefixTermsQuery(db, memoCount: 1000) == "\"ab1\"")
        }
        #expect(try store.count(filter: SearchFilter("A")) == 1000)
        #expect(try store.count(filter: SearchFilter("ab")) == 1000)
    }

    @Test("under a short filter, changes keep the filtered list equal to a new search")
    func filteredListFollowsChanges() throws {
        let store = try MemoStore()
        var ids: [String] = []
        for i in 0..<40 { ids.append(try store.create(text: i % 3 == 0 ? "회의 \(i)" : "메모 \(i)", now: Int64(i), filter: nil).memo.id) }
        try store.indexEverything()
        let filter = SearchFilter("회의")
        #expect(try store.count(filter: filter) == 14)
        _ = try store.update(id: ids[1], text: "이제 회의", baseVersion: nil, now: 100, filter: filter)
        _ = try store.update(id: ids[3], text: "회 의", baseVersion: nil, now: 101, filter: filter)
        _ = try store.create(text: "새 회의", now: 102, filter: filter)
        let listed = try store.page(filter: filter, offset: 0, limit: 100).map(\.id)
        store.cache.invalidate()  // the orders are built again: a new search
        let fresh = try store.page(filter: filter, offset: 0, limit: 100).map(\.id)
        #expect(listed.count == 15)
        #expect(listed == fresh)
    }

    @Test("a filter's check of one indexed memo asks the index about that memo")
    func perMemoCheckThroughTheIndex() throws {
        let (store, memos) = try indexedStore("weekly meeting notes", "meet in the evening")
        let (hit, miss) = (memos[0], memos[1])
        let filter = try #require(SearchFilter("MEETING"))
        try store.writer.read { db throws in
            for (id, expected) in [(hit.id, true), (miss.id, false)] {
                let stored = try #require(try MemoStore.liveMemo(id: id, db))
                #expect(stored.indexed)
                #expect(try store.matches(stored, filter: filter, db) == expected, "\(stored.text)")
            }
        }
    }

    @Test("a decomposed query is another search than the composed one: searches match bytes")
    func decomposedIsAnotherQuery() throws {
        let (store, _) = try indexedStore("회의")  // composed: one scalar a syllable
        let composed = try #require(SearchFilter("회"))
        let decomposed = try #require(SearchFilter("\u{1112}\u{116C}"))  // the same syllable as conjoining jamo
        #expect(composed != decomposed)
        #expect(try store.count(filter: composed) == 1)
        #expect(try store.count(filter: decomposed) == 0)  // not the composed search's list, kept in memory
    }

    // MARK: - The migration

    @Test("a store from before the short-term index is reindexed in the background, and searched meanwhile")
    func migrationFromV3() throws {
        let path = try writeStoreFile(migratedBy: MemoStore.migrator, upTo: "v3-sync") { db in
            for (seq, text) in ["끝에 회의", "회의록", "다른 메모"].enumerated() {
                try db.execute(sql: """
                    INSERT INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, indexed)
                    VALUES (?, ?, ?, '', 1, 1, 1, ?, 1)
                    """, arguments: ["m\(seq)", Data(text.utf8), text, seq + 1])
            }
        }
        let store = try MemoStore(path: path)
        let unindexed = try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE indexed = 0") }
        #expect(unindexed == 3)
        #expect(try store.count(filter: SearchFilter("회의")) == 2)  // read from the texts
        #expect(try store.indexPendingMemos() == 3)
        store.cache.invalidate()  // a new search, not the list kept from the last one
        #expect(try store.count(filter: SearchFilter("회의")) == 2)  // through the index
        #expect(try store.count(filter: SearchFilter("회의록")) == 1)
        try store.writer.read { db throws in
            #expect(try SearchFilter("회의")?.prefixTermsQuery(db, memoCount: 3)?.contains("\"회의" + sentinel + "\"") == true)
        }
        try expectIndexMatchesTexts(store)
    }

    @Test("the index stays equal to the texts it holds through creates, edits, deletes and reindexing")
    func indexIntegrity() throws {
        let (store, memos) = try indexedStore("첫 회의", "두 번째")
        let (first, second) = (memos[0], memos[1])
        _ = try store.update(id: first.id, text: "첫 회의 끝", baseVersion: nil, now: 3, filter: nil)
        _ = try store.delete(id: second.id, now: 4, filter: nil)
        try expectIndexMatchesTexts(store)
        try store.indexEverything()
        try expectIndexMatchesTexts(store)
        #expect(try store.count(filter: SearchFilter("끝")) == 1)
    }

    /// FTS5's own check of an external-content index against its content (the `indexed_memo` view):
    /// it fails when what the triggers put in differs from what the view shows.
    private func expectIndexMatchesTexts(_ store: MemoStore) throws {
        try store.writer.write { db in
            try db.execute(sql: "INSERT INTO memo_fts(memo_fts, rank) VALUES ('integrity-check', 1)")
        }
    }
}
