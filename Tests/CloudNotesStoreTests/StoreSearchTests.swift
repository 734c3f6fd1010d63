import CloudNotesTestSupport
import Foundation
import GRDB
import Testing

@testable import CloudNotesStore

@Suite("Search in the store")
struct StoreSearchTests {
    @Test("cloudnotes_gather gathers a query's integers into one value: every row, in order; a failing statement throws")
    func gatheredInt64s() throws {
        let store = try MemoStore()
        try store.writer.read { db in
            let values = try db.cachedStatement(sql: "SELECT cloudnotes_gather(value) FROM json_each(?)")
            #expect(try values.gatheredInt64s(arguments: ["[3, -1, 9007199254740993, 0]"]) == [3, -1, 9_007_199_254_740_993, 0])
            #expect(try values.gatheredInt64s(arguments: ["[]"]) == [])
            // Past the first buffer's 1,024 values, twice over.
            let many = try db.cachedStatement(sql: """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) SELECT cloudnotes_gather(i * 7) FROM n
                """)
            #expect(try many.gatheredInt64s(arguments: [5000]) == (1...5000).map { Int64($0 * 7) })
            let matches = try db.cachedStatement(sql: "SELECT cloudnotes_gather(rowid) FROM memo_fts WHERE memo_fts MATCH ?")
            #expect(throws: DatabaseError.self) { try matches.gatheredInt64s(arguments: ["\"unterminated"]) }
            #expect(try matches.gatheredInt64s(arguments: ["\"nowhere\""]) == [], "the statement was reset after its error")
        }
    }

    @Test("search finds substrings case-insensitively, Korean and short queries included", arguments: [
        ("quick", 1), ("QUICK", 1), ("ui", 1), ("q", 3), ("Z", 0), ("fOx", 1), ("메모", 2), ("메", 2), ("새로운 메모", 1), ("100%", 1), ("a_b", 1),
        ("\"quoted\"", 1), ("x", 1), ("없는", 0), ("%", 1), ("_", 1), ("är", 1), ("ÄR", 1), ("ärger", 1), ("bü", 1),
    ])
    func search(query: String, expected: Int) throws {
        let store = try MemoStore()
        for text in ["The Quick fox", "새로운 메모입니다", "메모 2\n100% done", "a_b and \"quoted\" words", "q", "ÄRGER im Büro"] {
            _ = try store.create(text: text, now: 1, filter: nil)
        }
        #expect(try store.count(filter: SearchFilter(query)) == expected, "\(query)")
    }

    @Test("a search with few matches among many memos lists them in order and follows later changes")
    func fewMatchesAmongMany() throws {
        let store = try MemoStore()
        var ids: [String] = []
        for i in 0..<300 {
            let text = [10, 50, 150].contains(i) ? "memo \(i) with a needle" : "memo \(i)"
            ids.append(try store.create(text: text, now: Int64(i), filter: nil).memo.id)
        }
        func listed(_ query: String) throws -> [String] {
            try store.page(filter: SearchFilter(query), offset: 0, limit: 1000).map(\.id)
        }
        for indexed in [false, true] {
            if indexed { try store.indexEverything() }  // through the full-text index too
            #expect(try listed("needle") == [ids[150], ids[50], ids[10]], "indexed: \(indexed)")
            #expect(try store.index(of: ids[50], filter: SearchFilter("needle")) == 1)
            #expect(try listed("memo").count == 300)  // many matches: the whole order is scanned
            #expect(try listed("nowhere").isEmpty)
        }
        let filter = SearchFilter("needle")
        _ = try store.update(id: ids[10], text: "memo 10, needle moved up", baseVersion: nil, now: 1000, filter: filter)
        _ = try store.update(id: ids[50], text: "memo 50, no longer", baseVersion: nil, now: 1001, filter: filter)
        _ = try store.update(id: ids[7], text: "memo 7, a needle now", baseVersion: nil, now: 1002, filter: filter)
        #expect(try listed("needle") == [ids[7], ids[10], ids[150]])
    }

    @Test("a query with a NUL finds only the memos that hold it")
    func nulQueries() throws {
        // Not a parameterized test: the test runner's console cannot print arguments holding a NUL.
        let store = try MemoStore()
        _ = try store.create(text: "before\u{0}after", now: 1, filter: nil)
        _ = try store.create(text: "no nul here", now: 1, filter: nil)
        for query in ["\u{0}", "e\u{0}", "\u{0}af", "before\u{0}after"] {
            #expect(try store.count(filter: SearchFilter(query)) == 1, "\(query.unicodeScalars.map(\.value))")
        }
    }

    @Test("search is never stale: it sees every committed change, also after reopening")
    func searchFollowsWrites() throws {
        let path = temporaryStorePath()
        do {
            let store = try MemoStore(path: path)
            let memo = try store.create(text: "alpha", now: 1, filter: nil).memo
            _ = try store.update(id: memo.id, text: "beta", baseVersion: nil, now: 2, filter: nil)
            #expect(try store.count(filter: SearchFilter("alpha")) == 0)
            #expect(try store.count(filter: SearchFilter("beta")) == 1)
        }
        let reopened = try MemoStore(path: path)
        #expect(try reopened.count(filter: SearchFilter("beta")) == 1)
        #expect(try reopened.integrityCheck() == "ok")
    }

    @Test("a long text is indexed in the background, and found by search before and after")
    func deferredIndexing() throws {
        let store = try MemoStore()
        let long = "needle " + String(repeating: "긴 메모 long text ", count: 2_000)
        let memo = try store.create(text: long, now: 1, filter: nil).memo
        #expect(!memo.indexed)
        #expect(try store.count(filter: SearchFilter("needle")) == 1)
        #expect(try store.count(filter: SearchFilter("긴 메모")) == 1)
        #expect(try store.indexPendingMemos() == 1)
        #expect(try store.indexPendingMemos() == 0)
        #expect(try store.count(filter: SearchFilter("needle")) == 1)
        let ftsRows = try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo_fts WHERE memo_fts MATCH '\"needle\"'") }
        #expect(ftsRows == 1)
        // An edit takes it out of the index again; search still finds the new text and not the old.
        _ = try store.update(id: memo.id, text: "haystack " + long.dropFirst(7), baseVersion: nil, now: 2, filter: nil)
        #expect(try store.count(filter: SearchFilter("needle")) == 0)
        #expect(try store.count(filter: SearchFilter("haystack")) == 1)
    }
}
