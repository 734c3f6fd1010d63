import CloudNotesJSON
import CloudNotesProtocol
import Foundation
import Testing

@Suite("Export file, an element at a time")
struct PrettyJSONArrayTests {
    @Test("an array written element by element is byte for byte what JSONEncoder writes for the whole array",
          arguments: [0, 1, 2, 5])
    func sameBytesAsJSONEncoder(count: Int) throws {
        let texts = ["Title\nbody", "\"quoted\" \\ back/slash\r\n\ttab \u{0} \u{1F}", "한국어 메모\n\n본문 😀", "", "one line only"]
        let entries = texts.prefix(count).enumerated().map { index, text in
            let lines = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)
            return ImportEntry(title: String(lines[0]), body: lines.count > 1 ? String(lines[1]) : "",
                               lastModified: Int64(1_700_000_000 + index), text: text).json(id: MemoID())
        }
        var array = PrettyJSONArray()
        var streamed = PrettyJSONArray.opening
        for entry in entries {
            var chunk: [UInt8] = []
            try array.append(entry, to: &chunk)
            streamed += chunk
        }
        streamed += PrettyJSONArray.closing

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: streamed, as: UTF8.self) == String(decoding: try encoder.encode(entries), as: UTF8.self))
        #expect(array.count == count)
    }
}
