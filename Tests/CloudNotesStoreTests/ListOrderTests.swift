import CloudNotesTestSupport
import Testing

@testable import CloudNotesStore

@Suite("List order in memory")
struct ListOrderTests {
    func entry(_ modifiedAt: Int64, _ seq: Int64) -> ListOrder.Entry {
        ListOrder.Entry(key: ListOrderKey(modifiedAt: modifiedAt, seq: seq), localID: seq)
    }

    @Test("indices count from the newest; pages come newest first")
    func indicesAndPages() {
        var order = ListOrder(ascending: [entry(1, 1), entry(1, 2), entry(5, 3)])
        #expect(order.index(of: ListOrderKey(modifiedAt: 5, seq: 3)) == 0)
        #expect(order.index(of: ListOrderKey(modifiedAt: 1, seq: 1)) == 2)
        #expect(order.index(of: ListOrderKey(modifiedAt: 2, seq: 9)) == nil)
        #expect(order.page(offset: 0, limit: 2) == [3, 2])
        #expect(order.page(offset: 2, limit: 10) == [1])
        #expect(order.page(offset: 3, limit: 10) == [])
        order.insert(entry(3, 4))
        #expect(order.page(offset: 0, limit: 10) == [3, 4, 2, 1])
        order.remove(ListOrderKey(modifiedAt: 5, seq: 3))
        order.insert(entry(9, 5))
        #expect(order.page(offset: 0, limit: 10) == [5, 4, 2, 1])
        #expect(order.count == 4)
    }

    @Test("random inserts and removals keep the order sorted", arguments: [1, 2, 3])
    func randomized(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var order = ListOrder(ascending: [])
        var reference: [ListOrder.Entry] = []
        for seq in 1...400 {
            let new = entry(Int64.random(in: 0..<50, using: &generator), Int64(seq))
            order.insert(new)
            reference.append(new)
            if Bool.random(using: &generator), let victim = reference.randomElement(using: &generator) {
                order.remove(victim.key)
                reference.removeAll { $0 == victim }
            }
        }
        #expect(order.entries == reference.sorted())
        for (index, element) in reference.sorted(by: >).enumerated() {
            #expect(order.index(of: element.key) == index)
        }
    }

    @Test("replacing the entries of some memos, in one pass, ends as moving each alone", arguments: [1, 2, 3])
    func replaceInOnePass(seed: UInt64) {
        var generator = SplitMix64(seed: seed)
        var entries: [ListOrder.Entry] = []
        for localID in Int64(1)...500 {
            entries.append(ListOrder.Entry(key: ListOrderKey(modifiedAt: .random(in: 0..<100, using: &generator), seq: localID),
                                           localID: localID))
        }
        var order = ListOrder(ascending: entries.sorted())
        var reference = order
        var seq = Int64(500)
        for _ in 0..<20 {
            // Some memos change (new keys), some leave the list, some are new.
            let changed = (0..<Int.random(in: 0..<40, using: &generator)).compactMap { _ in entries.randomElement(using: &generator) }
            var moved: [ListOrder.Entry] = []
            for old in Set(changed) {
                reference.remove(old.key)
                entries.removeAll { $0.localID == old.localID }
                guard Bool.random(using: &generator) else { continue }
                seq += 1
                let new = ListOrder.Entry(key: ListOrderKey(modifiedAt: .random(in: 0..<120, using: &generator), seq: seq), localID: old.localID)
                moved.append(new)
            }
            seq += 1
            let created = ListOrder.Entry(key: ListOrderKey(modifiedAt: .random(in: 0..<120, using: &generator), seq: seq), localID: seq)
            moved.append(created)
            for new in moved {
                reference.insert(new)
                entries.append(new)
            }
            order.replace(LocalIDSet(changed.map(\.localID) + [created.localID]), with: moved.shuffled(using: &generator))
            #expect(order.entries == reference.entries)
        }
    }
}
