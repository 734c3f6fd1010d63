import CloudNotesProtocol
import CloudNotesTestSupport
import Foundation
import Testing

@testable import CloudNotesJSON

@Suite("Streaming JSON encoder")
struct StreamingJSONEncoderTests {
    @Test("integers of every width and sign are written as Foundation writes them")
    func integers() throws {
        let signed: [Int64] = [0, 7, -1, 10, -10, 99, 100, 1_234_567_890, Int64.min, Int64.max]
        #expect(try StreamingJSONEncoder().encode(signed) == Array(try JSONEncoder().encode(signed)))
        let unsigned: [UInt64] = [0, 1, 9, 10, UInt64.max]
        #expect(try StreamingJSONEncoder().encode(unsigned) == Array(try JSONEncoder().encode(unsigned)))
        let small: [Int8] = [Int8.min, -1, 0, Int8.max]
        #expect(try StreamingJSONEncoder().encode(small) == Array(try JSONEncoder().encode(small)))
    }

    @Test("ids and timestamps, written without their containers, come out as their Encodable forms do")
    func idsAndTimestamps() throws {
        let ids = [MemoID(), MemoID("6F1C2A8E-3B7D-4F0A-9C55-2D8E1F4B7A90")!]
        let times = [Int64(0), 1_767_225_600_123, -1, -62_135_596_800_000, 253_402_300_799_999].map(Timestamp.init(milliseconds:))
        #expect(try StreamingJSONEncoder().encode(ids) == Array(try JSONEncoder().encode(ids)))
        #expect(try StreamingJSONEncoder().encode(times) == Array(try JSONEncoder().encode(times)))
        let row = MemoRow(id: ids[1], title: "t", preview: "p", modifiedAt: times[1], displayDate: "d")
        #expect(String(decoding: try StreamingJSONEncoder().encode(row), as: UTF8.self) == """
            {"id":"6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90","title":"t","preview":"p","modifiedAt":"2026-01-01T00:00:00.123Z","displayDate":"d"}
            """)
    }

    @Test("memos and list rows, written member by member, come out byte for byte as their Encodable conformances write them")
    func memosAndRowsByHand() throws {
        /// Encodes a value through its own `encode(to:)`, the way every other type goes.
        struct ThroughEncodable<Value: Encodable>: Encodable {
            let value: Value
            func encode(to encoder: any Encoder) throws { try value.encode(to: encoder) }
        }
        var memos = [
            Memo.example,
            Memo(id: MemoID(), text: "Title \"quoted\"\r\n\u{0}body\t한국어 😀", title: "Title \"quoted\"", body: "\u{0}body\t한국어 😀",
                 createdAt: Timestamp(milliseconds: -62_135_596_800_000), modifiedAt: Timestamp(milliseconds: 253_402_300_799_999),
                 version: Int64.max, displayDate: "January 1, 2026 at 12:00\u{202F}AM"),
        ]
        // The body is written as a copy of the text's escaped end when the text ends with it: escapes on
        // both sides of where it starts, a body that is the whole text, none, and bodies the text does
        // not end with (a `Memo` holds what it is given).
        let long = String(repeating: "줄 \"인용\"\t끝\\\u{1}\n", count: 9000)
        let bodies = [("\"Title\"\n\n\u{1F}" + long, "\n\u{1F}" + long), ("\u{1}", "\u{1}"), ("Title only", ""),
                      ("Title\nbody", "other"), ("Title\nbody", "longer than the text itself"), ("\\x", "x")]
        for (text, body) in bodies {
            var memo = Memo.example
            memo.text = text
            memo.body = body
            memos.append(memo)
        }
        for memo in memos {
            #expect(try StreamingJSONEncoder().encode(memo) == StreamingJSONEncoder().encode(ThroughEncodable(value: memo)))
        }
        let rows = [
            MemoRow(id: MemoID(), title: "Title \"quoted\" \\ \u{1}", preview: "한국어 😀\ttab", modifiedAt: Timestamp(milliseconds: 1_767_225_600_123), displayDate: "January 1, 2026 at 12:00\u{202F}AM"),
            MemoRow(id: MemoID(), title: "", preview: "", modifiedAt: Timestamp(milliseconds: -1), displayDate: ""),
        ]
        for row in rows {
            #expect(try StreamingJSONEncoder().encode(row) == StreamingJSONEncoder().encode(ThroughEncodable(value: row)))
        }
        let pair = try bothEncodings(of: ListResult(total: 2, rows: rows))
        #expect(pair.streamed == pair.foundation)
    }

    @Test("strings are escaped exactly", arguments: [
        "plain", "quote \" backslash \\ slash /", "line\nfeed\r\ttab", "nul \u{0} bell \u{7} escape \u{1B}", "한국어 😀 ✈️", "",
    ])
    func strings(text: String) throws {
        let bytes = try StreamingJSONEncoder().encode([text])
        #expect(try JSONDecoder().decode([String].self, from: Data(bytes)) == [text])
    }

    @Test("long texts and many strings in one message are escaped byte for byte, each wherever it starts in the output")
    func manyStrings() throws {
        /// The escaping the encoder promises: two-character escapes for five bytes, \u00XX for other control bytes.
        func reference(_ text: String) -> String {
            "\"" + text.unicodeScalars.map { scalar -> String in
                switch scalar {
                case "\"": "\\\""
                case "\\": "\\\\"
                case "\n": "\\n"
                case "\r": "\\r"
                case "\t": "\\t"
                case _ where scalar.value < 0x20: "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
                default: String(scalar)
                }
            }.joined() + "\""
        }
        let everyASCII = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        var random = SplitMix64(seed: 16)
        let alphabet: [Character] = ["a", "b", "한", "😀", "\n", "\"", "\\", "\t", "\u{1}", "\u{1F}", " "]
        let texts = ["", "x", everyASCII, String(repeating: "줄 한 줄\n\"인용\"\t끝\\", count: 3000), "tail \u{1F}", String(repeating: "a", count: 70_000),
                     // Escapes that outgrow the room made for them, again and again, in runs and escapes alike.
                     String(repeating: "\u{1}\n\"ab", count: 20_000)]
            // Escapes at every place in and around the sixteen bytes the search looks at a step.
            + (0..<300).map { _ in
                String((0..<Int.random(in: 0...60, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
            }
        let bytes = try StreamingJSONEncoder().encode(texts + texts.reversed())
        #expect(String(decoding: bytes, as: UTF8.self) == "[" + (texts + texts.reversed()).map(reference).joined(separator: ",") + "]")
        #expect(try JSONDecoder().decode([String].self, from: Data(bytes)) == texts + texts.reversed())
    }

    @Test("nested containers, super encoders, empty values and non-finite numbers")
    func shapes() throws {
        let pair = try bothEncodings(of: Awkward())
        #expect(pair.streamed == pair.foundation)
        #expect(String(decoding: try StreamingJSONEncoder().encode(Empty()), as: UTF8.self) == "{}")
        #expect(throws: EncodingError.self) { try StreamingJSONEncoder().encode([Double.nan]) }
        #expect(String(decoding: try StreamingJSONEncoder().encode([1.5, 2, -0.25]), as: UTF8.self) == "[1.5,2,-0.25]")
    }

    @Test("an error names the path of the value that failed, as Foundation's encoder does")
    func errorPath() throws {
        func path(_ encode: () throws -> Void) -> [String] {
            do {
                try encode()
            } catch let EncodingError.invalidValue(_, context) {
                return context.codingPath.map(\.stringValue)
            } catch {}
            return ["no invalidValue error"]
        }
        let value = Outer(inner: Inner(number: 1, single: Single(value: .infinity)), rows: [])
        let streamed = path { _ = try StreamingJSONEncoder().encode(value) }
        #expect(streamed == ["inner", "single"])
        #expect(streamed == path { _ = try JSONEncoder().encode(value) })

        let good = Inner(number: 1, single: Single(value: 1))
        let inArray = Outer(inner: good, rows: [good, Inner(number: 2, single: Single(value: .nan)), good])
        let streamedInArray = path { _ = try StreamingJSONEncoder().encode(inArray) }
        #expect(streamedInArray == ["rows", "Index 1", "single"])
        #expect(streamedInArray == path { _ = try JSONEncoder().encode(inArray) })
    }
}

private struct Outer: Encodable {
    let inner: Inner
    let rows: [Inner]
}
private struct Inner: Encodable {
    let number: Int
    let single: Single
}
/// Encodes itself as a single value, as `MemoID` and `Timestamp` do.
private struct Single: Encodable {
    let value: Double
    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

private struct Empty: Encodable {}

/// A type that uses every kind of container Codable offers.
private struct Awkward: Encodable {
    enum Keys: String, CodingKey { case a, nested, list, inner, after, base }
    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .a)
        var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .nested)
        try nested.encode("x", forKey: .a)
        var list = nested.nestedUnkeyedContainer(forKey: .list)
        try list.encode(true)
        try list.encodeNil()
        var inner = list.nestedContainer(keyedBy: Keys.self)
        try inner.encode([1, 2], forKey: .inner)
        try list.encode("last")
        try nested.encode(Empty(), forKey: .after)
        try container.encode(["k": [String: Int]()], forKey: .list)
        try Optional<Int>.none.encode(to: container.superEncoder(forKey: .base))
        try container.encodeIfPresent(Optional<Int>.none, forKey: .after)
    }
}
