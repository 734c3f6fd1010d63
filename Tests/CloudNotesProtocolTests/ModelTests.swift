import CloudNotesProtocol
import Foundation
import Testing

@Suite("Protocol model")
struct ModelTests {
    @Test("memo ids are UUIDs written in lower case; anything else is refused")
    func memoIDs() throws {
        let id = try #require(MemoID("6F1C2A8E-3B7D-4F0A-9C55-2D8E1F4B7A90"))
        #expect(id.description == "6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90")
        #expect(MemoID("not-a-uuid") == nil)
        #expect(MemoID("6f1c2a8e-3b7d-4F0A-9c55-2d8e1f4b7a90")?.description == "6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90")
        #expect(MemoID("6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90")?.description == "6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90")
        for bad in ["6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a9", "6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a900", "6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a9g",
                    "6f1c2a8e3-b7d-4f0a-9c55-2d8e1f4b7a90", "6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7é0", "6f1c2a8e 3b7d-4f0a-9c55-2d8e1f4b7a90"] {
            #expect(MemoID(bad) == nil, "\(bad)")
        }
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([MemoID].self, from: Data(#"["x"]"#.utf8)) }
    }

    @Test("timestamps are ISO 8601 UTC with milliseconds and round-trip")
    func timestamps() throws {
        let stamp = Timestamp(milliseconds: 1_767_225_600_123)
        #expect(stamp.iso8601 == "2026-01-01T00:00:00.123Z")
        let decoded = try JSONDecoder().decode([Timestamp].self, from: JSONEncoder().encode([stamp]))
        #expect(decoded == [stamp])
        #expect(Timestamp(milliseconds: 0).iso8601 == "1970-01-01T00:00:00.000Z")
        #expect(Timestamp(milliseconds: -1).iso8601 == "1969-12-31T23:59:59.999Z")
        #expect(Timestamp(milliseconds: 951_782_400_000).iso8601 == "2000-02-29T00:00:00.000Z")
        for milliseconds: Int64 in [-86_400_001, 0, 1_608_651_333_000, 253_402_300_799_999] {
            #expect(Timestamp(iso8601: Timestamp(milliseconds: milliseconds).iso8601)?.milliseconds == milliseconds)
        }
        #expect(Timestamp(iso8601: "2026-13-01T00:00:00.000Z") == nil)
    }

    @Test("request ids are integers or strings")
    func requestIDs() throws {
        let ids = try JSONDecoder().decode([RequestID].self, from: Data(#"[7, "a"]"#.utf8))
        #expect(ids == [.number(7), .string("a")])
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([RequestID].self, from: Data(#"[{}]"#.utf8)) }
    }

    /// Decodes entries as an import does, with the entry under test at index 4.
    func decodeEntry(_ entry: JSONValue) throws -> ImportEntry {
        let good: JSONValue = ["title": "T", "body": "B", "last_modified": 1]
        let data = try JSONEncoder().encode([good, good, good, good, entry])
        return try JSONDecoder().decode([ImportEntry].self, from: data)[4]
    }

    @Test("import entries need title, body and whole Unix seconds, and name the bad entry")
    func importEntries() throws {
        let good = try decodeEntry(["title": "T", "body": "B", "last_modified": 1_608_651_333])
        #expect(good.memoText == "T\nB")
        #expect(try decodeEntry(["title": "T", "body": "", "last_modified": 1]).memoText == "T")
        let exact = try decodeEntry(["title": "T", "body": "B", "last_modified": 1, "text": "\n\nT\r\nB"])
        #expect(exact.memoText == "\n\nT\r\nB")
        for bad: JSONValue in [["title": "T", "body": "B"], ["title": 1, "body": "B", "last_modified": 1],
                               ["title": "T", "body": "B", "last_modified": .number(1.5)], "text",
                               ["title": "T", "body": "B", "last_modified": -5], ["title": "T", "body": "B", "last_modified": 1, "text": 2]] {
            do {
                _ = try decodeEntry(bad)
                Issue.record("accepted \(bad)")
            } catch let error as ResponseError {
                #expect(error.code == .importInvalid)
                #expect(error.data?["index"] == .number(4))
            }
        }
    }

    @Test("a conflict error carries the current memo")
    func conflictData() {
        let error = ResponseError.versionConflict(baseVersion: 1, current: .example)
        #expect(error.code.rawValue == -33002)
        #expect(error.data?["memo"]?["id"] == .string(Memo.example.id.description))
    }
}
