import Testing

@testable import CloudNotesStore

@Suite("Memos a sync changed")
struct ChangedMemosTests {
    @Test("each memo counts once, across pulls and merges, whichever word of the set holds it")
    func distinctMemos() {
        // 63 and 64 sit on either side of a word's edge; -1 is a rowid SQLite allows.
        var pulled: ChangedMemos = [1, 63, 64, 1, 100_000]
        #expect(pulled.count == 4)
        #expect(pulled.contains(1) && pulled.contains(63) && pulled.contains(64) && pulled.contains(100_000))
        #expect(!pulled.contains(0) && !pulled.contains(2) && !pulled.contains(65) && !pulled.contains(-1))

        var merged = ChangedMemos()
        #expect(merged.isEmpty)
        merged.insert(64)
        merged.insert(-1)
        merged.insert(-1)
        merged.insert(Int64.max)
        #expect(merged.count == 3)
        pulled.formUnion(merged)
        #expect(pulled.count == 6, "64 was in both")
        #expect(pulled.contains(-1) && pulled.contains(Int64.max) && !pulled.contains(-2) && !pulled.contains(Int64.min))
        #expect(pulled == [Int64.max, -1, 100_000, 64, 63, 1])
    }

    @Test("a first sync's 100,000 memos fit in a few kilobytes")
    func denseIDsStaySmall() {
        var changed = ChangedMemos()
        for localID in Int64(1)...100_000 { changed.insert(localID) }
        var again = ChangedMemos()
        for localID in stride(from: Int64(100_000), through: 1, by: -2) { again.insert(localID) }
        changed.formUnion(again)
        #expect(changed.count == 100_000)
        #expect(changed.wordCount == 1_563, "one word for each 64 ids")
    }
}
