import Foundation
import Testing

@testable import CloudNotesStore

@Suite("Memo ids drawn in bulk")
struct RandomMemoIDsTests {
    @Test("each id is a lowercase version 4 UUID of the RFC variant, beginning with the byte asked for")
    func format() throws {
        for leadingByte: UInt8 in [0x00, 0x0a, 0x7f, 0xff] {
            let ids = RandomMemoIDs.make(count: 500, leadingByte: leadingByte)
            #expect(ids.count == 500)
            for id in ids {
                let uuid = try #require(UUID(uuidString: id), "\(id)")
                #expect(uuid.uuidString.lowercased() == id)
                #expect(uuid.uuid.0 == leadingByte)
                #expect(uuid.uuid.6 >> 4 == 4, "version 4: \(id)")
                #expect(uuid.uuid.8 >> 6 == 0b10, "RFC 9562's variant: \(id)")
            }
        }
        #expect(RandomMemoIDs.make(count: 0, leadingByte: 1).isEmpty)
    }

    @Test("the random bits differ from id to id and from call to call, and each is set about half the time")
    func randomness() {
        let ids = RandomMemoIDs.make(count: 20_000, leadingByte: 0x42) + RandomMemoIDs.make(count: 20_000, leadingByte: 0x42)
        #expect(Set(ids).count == ids.count)
        // Each of the 114 random bits, counted over the 40,000 ids: a bit stuck at 0 or 1 (a byte never
        // filled, a digit written twice) is far outside 50% ± 2%.
        var ones = [Int](repeating: 0, count: 128)
        for id in ids {
            let bytes = withUnsafeBytes(of: UUID(uuidString: id)!.uuid) { Array($0) }
            for bit in 0..<128 where bytes[bit / 8] & (0x80 >> (bit % 8)) != 0 { ones[bit] += 1 }
        }
        let fixed = Set(0..<8).union(48..<52).union(64..<66)  // the leading byte, the version, the variant
        for bit in 0..<128 where !fixed.contains(bit) {
            #expect(abs(Double(ones[bit]) / Double(ids.count) - 0.5) < 0.02, "bit \(bit)")
        }
    }
}
