import CloudNotesProtocol
import CloudNotesTestSupport
import Foundation
import Testing

@testable import CloudNotesTransfer

@Suite("Import file reader")
struct ImportFileReaderTests {
    func file(_ text: String) throws -> String {
        let path = try temporaryFolder() + "/import.json"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Every entry of `text`, read a few bytes at a time so that values straddle reads.
    func read(_ text: String, chunkSize: Int = 7) throws -> [ImportEntry] {
        let reader = try ImportFileReader(path: try file(text), chunkSize: chunkSize)
        var all: [ImportEntry] = []
        while case let entries = try reader.next(limit: 2), !entries.isEmpty { all += entries }
        return all
    }

    func failure(_ text: String) throws -> ResponseError? {
        do {
            _ = try read(text)
            return nil
        } catch let error as ResponseError {
            return error
        }
    }

    @Test("entries are read whole, whatever the brackets, commas and escapes inside their strings")
    func entries() throws {
        let tricky = #"[ {"title":"a, [b] {c}","body":"quote \" and \\ backslash ]","last_modified":1},"#
            + #"{"title":"한글 😀","body":"","last_modified":2, "extra": {"nested": [1, {"x": "]"}]}} ,"#
            + #"{"title":"t","body":"b","last_modified":3,"text":"exact\r\n"}]"# + "\n"
        let entries = try read(tricky)
        #expect(entries.map(\.title) == ["a, [b] {c}", "한글 😀", "t"])
        #expect(entries[0].body == #"quote " and \ backslash ]"#)
        #expect(entries[2].memoText == "exact\r\n")
        #expect(try read("[]").isEmpty)
        #expect(try read("  [ ]  ").isEmpty)
        let many = "[" + (0..<50).map { #"{"title":"\#($0)","body":"","last_modified":\#($0)}"# }.joined(separator: ",") + "]"
        #expect(try read(many, chunkSize: 3).map(\.lastModified) == (0..<50).map(Int64.init))
    }

    /// A random text of `length` characters, long runs of ordinary ones (Korean, English, an emoji)
    /// broken by those a JSON string escapes: quotes, backslashes, control characters, line ends.
    func randomText(length: Int, _ random: inout SplitMix64) -> String {
        let ordinary: [Character] = ["a", "b", " ", "회", "의", "😀", "]", "}", ",", "/"]
        let special: [Character] = ["\"", "\\", "\n", "\r\n", "\t", "\u{01}", "\u{1F}", "\u{7F}"]
        return String((0..<length).map { _ in
            Int.random(in: 0..<40, using: &random) == 0 ? special.randomElement(using: &random)! : ordinary.randomElement(using: &random)!
        })
    }

    @Test("long texts that straddle reads, with escapes anywhere, read as Foundation decodes the whole file",
          arguments: [7, 16, 17, 100, 4096, 1 << 20])
    func longTextsAcrossReads(chunkSize: Int) throws {
        var random = SplitMix64(seed: UInt64(chunkSize))
        let entries = (0..<60).map { index in
            ImportEntry(title: randomText(length: index % 7, &random), body: randomText(length: Int.random(in: 0..<3000, using: &random), &random),
                        lastModified: Int64(index), text: index % 3 == 0 ? randomText(length: 200, &random) : nil)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = chunkSize % 2 == 1 ? [.prettyPrinted] : []  // spaces and line ends between values
        let data = try encoder.encode(entries)
        let expected = try JSONDecoder().decode([ImportEntry].self, from: data)
        #expect(try read(String(decoding: data, as: UTF8.self), chunkSize: chunkSize) == expected)
        #expect(expected == entries)
    }

    @Test("a chunk stops at its count or once it took its bytes of the file, and holds at least one entry")
    func chunksBoundedByBytes() throws {
        let long = String(repeating: "x", count: 400)
        let file = "[" + (0..<10).map { #"{"title":"\#($0)","body":"\#(long)","last_modified":1}"# }.joined(separator: ",") + "]"
        let reader = try ImportFileReader(path: try self.file(file), chunkSize: 7)
        // Each entry is about 440 bytes: 1,000 bytes take three, and the count stops first at two.
        #expect(try reader.next(limit: 100, byteLimit: 1000).map(\.title) == ["0", "1", "2"])
        #expect(try reader.next(limit: 2, byteLimit: 1000).map(\.title) == ["3", "4"])
        #expect(try reader.next(limit: 100, byteLimit: 1).map(\.title) == ["5"])
        #expect(try reader.next(limit: 100).map(\.title) == ["6", "7", "8", "9"])
        #expect(try reader.next(limit: 100, byteLimit: 1).isEmpty)
    }

    @Test("a file that is not an array of entries is refused, naming the entry at fault")
    func malformed() throws {
        #expect(try failure(#"{"title":"x"}"#)?.code == .importInvalid)
        #expect(try failure("")?.code == .importInvalid)
        #expect(try failure(#"[{"title":"x","body":"","last_modified":1}"#)?.code == .importInvalid)
        #expect(try failure(#"[{"title":"x","body":"","last_modified":1}] trailing"#)?.code == .importInvalid)
        let bad = try failure(#"[{"title":"x","body":"","last_modified":1},{"title":"y","body":7,"last_modified":1}]"#)
        #expect(bad?.data?["index"] == 1)
        #expect(try failure(#"[{"title":"x","body":"","last_modified":1} {"title":"y"}]"#)?.code == .importInvalid)
        #expect(try failure(#"[{"title":"x","body":"","last_modified":1}, 42]"#)?.data?["index"] == 1)
        #expect(try failure(#"[{"title":"x","body":"unterminated]"#)?.code == .importInvalid)
        #expect(try failure("[{\"title\":\"\u{FFFD}\",\"body\":\"\",\"last_modified\":1}]") == nil)
        let twice = #"[{"title":"x","body":"","last_modified":1,"last_modified":2}]"#
        let foundation = try? JSONDecoder().decode([ImportEntry].self, from: Data(twice.utf8))
        #expect((try? read(twice)) == foundation, "a member named twice: Foundation decides")
        #expect(try failure(#"[{"title":"x","body":"","last_modified":1.5}]"#)?.data?["index"] == 0)
        let notUTF8 = Data(#"[{"title":"x","body":"","last_modified":1},{"title":"y","body":"\#u{FF}","last_modified":1}]"#.utf8)
            .map { $0 == 0xC3 ? 0xFF : $0 }  // U+00FF's lead byte, made a byte UTF-8 never holds
        let path = try file("")
        try Data(notUTF8).write(to: URL(fileURLWithPath: path))
        let reader = try ImportFileReader(path: path)
        #expect(throws: ResponseError.self) { _ = try reader.next(limit: 10) }
        #expect(try ImportFileReader(path: path).next(limit: 1).count == 1, "the entry before is read")
    }
}
