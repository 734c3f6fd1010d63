import CloudNotesTestSupport
import Testing

@testable import CloudNotesStore

@Suite("Sets of local ids")
struct LocalIDSetTests {
    /// Every id near the members (and far from them) is in the set exactly when a `Set` holds it, one
    /// at a time and filtered together.
    func expectSameAsSet(_ ids: [Int64], probes: [Int64]) {
        let set = LocalIDSet(ids)
        let reference = Set(ids)
        for probe in probes + ids {
            #expect(set.contains(probe) == reference.contains(probe), "id \(probe)")
        }
        #expect(set.filter(probes + ids, expected: ids.count, id: { $0 }) == (probes + ids).filter(reference.contains))
    }

    @Test("dense ids, as SQLite hands them out, answer like a Set", arguments: [0, 1, 10, 1000] as [UInt64])
    func dense(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let ids = (0..<Int.random(in: 0...3000, using: &random)).map { _ in Int64.random(in: 1...100_000, using: &random) }
        let probes = (0..<3000).map { _ in Int64.random(in: -70...100_070, using: &random) } + [0, 63, 64, 65, -1, .min, .max]
        expectSameAsSet(ids, probes: probes)
    }

    @Test("ids beyond the bitmap's reach, and negative ones, answer like a Set")
    func outOfReach() {
        let limit = LocalIDSet.bitmapLimit
        expectSameAsSet([1, limit], probes: [0, 1, 2, limit - 1, limit, limit + 1, .max])
        expectSameAsSet([1, limit + 1], probes: [0, 1, 2, limit, limit + 1, limit + 2, .max])
        expectSameAsSet([.max, 5], probes: [5, 6, .max, .max - 1, .min])
        expectSameAsSet([-3, 5], probes: [-3, -2, 5, 0, .min])
        expectSameAsSet([], probes: [0, 1, -1, .max, .min])
    }
}
