import Foundation
import Testing

@testable import CloudNotesStore

@Suite("Memos a sync changed")
struct ChangedMemosTests {
    @Test("each memo counts once, across pulls and merges; ids that are not UUIDs count too")
    func distinctMemos() {
        let first = UUID().uuidString.lowercased()
        let second = UUID().uuidString.lowercased()
        var pulled: ChangedMemos = [first, second, first]
        #expect(pulled.count == 2 && pulled.contains(first) && pulled.contains(second))
        #expect(!pulled.contains(UUID().uuidString.lowercased()))

        var merged = ChangedMemos()
        #expect(merged.isEmpty)
        merged.insert(second)
        merged.insert("not-a-uuid")
        merged.insert("not-a-uuid")
        pulled.formUnion(merged)
        #expect(pulled.count == 3 && pulled.contains("not-a-uuid") && !pulled.contains("not-a-uuid-either"))
        #expect(pulled == [second, "not-a-uuid", first])
    }
}
