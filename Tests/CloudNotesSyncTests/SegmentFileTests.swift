import CloudNotesTestSupport
import Foundation
import Testing

@testable import CloudNotesSync

@Suite("Segment files")
struct SegmentFileTests {
    @Test("a segment's lines are split as the standard split would, empty lines and slices included")
    func linesAsSplit() {
        var random = SplitMix64(seed: 7)
        var samples: [Data] = ["", "a", "\n", "\n\n", "a\n\nb", "ab\n", "\nab"].map { Data($0.utf8) }
        for _ in 0..<200 {
            samples.append(Data((0..<Int.random(in: 0..<40, using: &random)).map { _ in
                [UInt8(ascii: "\n"), UInt8(ascii: "x"), 0xE2].randomElement(using: &random)!
            }))
        }
        // A slice that does not start at index 0, as `dropLast` and a received body can be.
        samples.append(Data("skip\nline one\n\nline three".utf8).dropFirst(5))
        for data in samples {
            let expected = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { Data($0) }
            #expect(SegmentFile.lines(of: data) == expected, "\(Array(data))")
        }
    }
}
