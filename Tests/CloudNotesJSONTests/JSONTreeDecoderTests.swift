import CloudNotesJSON
import CloudNotesProtocol
import CloudNotesTestSupport
import Foundation
import Testing

/// `JSONTreeDecoder` must decode what Foundation's `JSONDecoder` decodes, to the same values, and leave
/// everything else to it.
@Suite("JSON tree decoder")
struct JSONTreeDecoderTests {
    /// The value as sorted JSON, to compare types that are not Equatable.
    func canonical(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try! encoder.encode(value), as: UTF8.self)
    }

    /// What each decoder makes of `json`: the tree decoder's result (nil when it gave up) and Foundation's.
    ///
    /// The tree decoder runs twice, checking the strings' UTF-8 and taking it as checked (as it does for
    /// a line the message decoder checked): both must give the same.
    func both<T: Codable>(_ type: T.Type, _ json: String) -> (tree: String?, foundation: String?) {
        let data = Data(json.utf8)
        let tree = JSONDecoding.decodedFromTree(T.self, data).map(canonical)
        #expect(JSONDecoding.decodedFromTree(T.self, data, knownValidUTF8: true).map(canonical) == tree, "\(json)")
        return (tree, (try? JSONDecoder().decode(T.self, from: data)).map(canonical))
    }

    // MARK: - The ordinary requests take the quick way

    @Test("every request's example is decoded without Foundation, to what Foundation decodes")
    func examples() throws {
        func check<Request: RequestType>(_ type: Request.Type) throws {
            let json = String(decoding: try JSONEncoder().encode(Request.example), as: UTF8.self)
            let (tree, foundation) = both(Request.self, json)
            #expect(tree != nil, "\(Request.method) left to Foundation: \(json)")
            #expect(tree == foundation, "\(Request.method): \(json)")
        }
        for request in ProtocolRegistry.requests {
            try check(request)
        }
    }

    @Test("a typing request with a long multi-line Korean and English text, and an edit, take the quick way")
    func typing() throws {
        let text = (0..<2000).map { "줄 \($0): Some English, 한국어 \"인용\" and a tab\there\\ 🎉" }.joined(separator: "\n")
        let update = UpdateRequest(id: Memo.example.id, text: text, baseVersion: 41)
        let json = String(decoding: try JSONEncoder().encode(update), as: UTF8.self)
        for knownValidUTF8 in [false, true] {
            let decoded = try #require(JSONDecoding.decodedFromTree(UpdateRequest.self, Data(json.utf8), knownValidUTF8: knownValidUTF8))
            #expect(decoded == update)
            #expect(decoded.text.utf8.elementsEqual(text.utf8))
        }

        let edit = #"{"id":"\#(Memo.example.id)","baseVersion":7,"edits":[{"start":3,"end":3,"text":"가"},{"start":0,"end":1,"text":""}]}"#
        let (tree, foundation) = both(EditRequest.self, edit)
        #expect(tree != nil)
        #expect(tree == foundation)
    }

    // MARK: - Strings

    @Test("every escape is undone as Foundation undoes it", arguments: [
        #""plain""#, #""""#, #""\"\\\/\b\f\n\r\t""#, #""\u0000\u001f\u0041\u00e9\u20AC\uD55C""#,
        #""\ud83c\udf89 a surrogate pair""#, #""mixed 한국어 \n\n and \u00e9 and é""#, #""\u002F""#,
    ])
    func escapes(_ literal: String) {
        let json = #"{"text":"# + literal + "}"
        let (tree, foundation) = both([String: String].self, json)
        #expect(tree != nil)
        #expect(tree == foundation)
    }

    @Test("random strings round-trip through Foundation's encoder and the tree decoder unchanged")
    func randomStrings() throws {
        var random = SplitMix64(seed: 20261124)
        let pieces: [String] = ["a", " ", "\n", "\t", "\"", "\\", "/", "\u{0}", "\u{1f}", "\u{7f}", "é", "한", "🎉", "\r\n", "\u{2028}"]
        for _ in 0..<500 {
            let text = (0..<Int.random(in: 0...40, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let json = try JSONEncoder().encode(["text": text])
            for knownValidUTF8 in [false, true] {
                let decoded = try #require(JSONDecoding.decodedFromTree([String: String].self, json, knownValidUTF8: knownValidUTF8))
                #expect(decoded["text"].map { Array($0.utf8) } == Array(text.utf8))
                #expect(decoded["text"] == text)
            }
        }
    }

    // MARK: - What is left to Foundation

    @Test("numbers it does not read exactly as Foundation are left to it", arguments: [
        #"{"offset":1.0}"#, #"{"offset":2.5}"#, #"{"offset":1e2}"#, #"{"offset":-0}"#, #"{"offset":1234567890123456}"#,
        #"{"offset":1e400}"#, #"{"limit":-0.0}"#,
    ])
    func numbersLeftToFoundation(_ json: String) {
        #expect(JSONDecoding.decodedFromTree(ListRequest.self, Data(json.utf8)) == nil)
    }

    @Test("text it cannot take as it is is left to Foundation", arguments: [
        #"{"text":"\ud800"}"#, #"{"text":"\udc00x"}"#, #"{"text":"\ud800\u0041"}"#, #"{"text":"a","text":"b"}"#,
        #"{"text":"\x"}"#, #"{"text":"\u12"}"#, #"{"text":"a"} x"#, #"{"text":"a",}"#, #"{"text":01}"#, "{\"text\":\"\u{1}\"}",
        #"{"text":tru}"#, #"{"text":"unterminated}"#, String(repeating: "[", count: 200) + String(repeating: "]", count: 200),
    ])
    func textLeftToFoundation(_ json: String) {
        #expect(JSONDecoding.decodedFromTree([String: JSONValue].self, Data(json.utf8)) == nil)
    }

    @Test("bytes that are not UTF-8 are left to Foundation")
    func notUTF8() {
        let json = Data(#"{"text":"a"#.utf8) + [0xFF, 0xC3] + Data(#""}"#.utf8)
        #expect(JSONDecoding.decodedFromTree([String: String].self, json) == nil)
    }

    @Test("what Foundation refuses, the tree decoder refuses too, so the client reads Foundation's error", arguments: [
        #"{"text":"x"}"#, #"{"id":5,"text":"x"}"#, #"{"id":"\#(Memo.example.id)"}"#, #"{"id":"\#(Memo.example.id)","text":null}"#,
        #"{"id":"not-a-uuid","text":"x"}"#, #"{"id":"\#(Memo.example.id)","text":"x","baseVersion":0}"#,
        #"{"id":"\#(Memo.example.id)","text":"x","baseVersion":"3"}"#, #"{"id":"\#(Memo.example.id)","text":"x","baseVersion":[3]}"#,
        #"[1,2]"#, #""text""#, #"7"#,
    ])
    func refusals(_ json: String) {
        let data = Data(json.utf8)
        #expect(JSONDecoding.decodedFromTree(UpdateRequest.self, data) == nil)
        func message(_ body: () throws -> UpdateRequest) -> String {
            do {
                _ = try body()
                return "decoded"
            } catch {
                return String(describing: error)
            }
        }
        #expect(message { try JSONDecoding.decode(UpdateRequest.self, from: data) } == message { try JSONDecoder().decode(UpdateRequest.self, from: data) })
    }

    // MARK: - Random params

    @Test("random params of the typing and listing requests: the same values as Foundation, or left to it")
    func randomParams() {
        var random = SplitMix64(seed: 7)
        let values: [String] = [
            #""\#(Memo.example.id)""#, #""\#(Memo.example.id.description.uppercased())""#, #""x\ny""#, #""""#, "null", "true",
            "0", "1", "-1", "7", "2.5", "1e3", "-0", "9007199254740993", "[]", #"[{"start":0,"end":0,"text":"a"}]"#,
            #"[{"start":1,"end":0,"text":"b"}]"#, #"[{"start":0,"text":"a"}]"#, #"[{"start":0,"end":0,"text":7}]"#, "{}", #"{"a":1}"#,
        ]
        let names = ["id", "text", "baseVersion", "edits", "offset", "limit", "query", "other"]
        var quick = 0
        for _ in 0..<3000 {
            let members = names.filter { _ in Bool.random(using: &random) }
                .map { #""\#($0)":\#(values.randomElement(using: &random)!)"# }
            let json = "{" + members.joined(separator: ",") + "}"
            for (tree, foundation) in [
                both(UpdateRequest.self, json), both(EditRequest.self, json), both(ListRequest.self, json),
                both(SearchRequest.self, json), both(SelectRequest.self, json), both(CreateRequest.self, json),
            ] {
                if let tree {
                    quick += 1
                    #expect(tree == foundation, "\(json)")
                }
            }
        }
        #expect(quick > 3000, "too few params took the quick way to test it")
    }
}
