import CloudNotesProtocol
import Foundation
import Testing

@testable import CloudNotesTransport

@Suite("Message decoder")
struct MessageDecoderTests {
    let decoder = MessageDecoder(maxNestingDepth: 64)

    func error(_ line: String) -> (id: RequestID?, code: Int)? {
        error(Data(line.utf8))
    }

    func error(_ line: Data) -> (id: RequestID?, code: Int)? {
        if case .invalid(let id, let error) = decoder.decode(line) { return (id, error.code.rawValue) }
        return nil
    }

    @Test("the params are handed on as their exact JSON text, wherever they stand in the line")
    func paramsText() {
        let params = #"{"a":[1,{"b":"}\\"}],"c":{}}"#
        let lines = [
            #"{"jsonrpc":"2.0","id":7,"method":"x","params":"# + params + "}",
            #" { "params" :  "# + params + #" , "method":"x","id":7,"jsonrpc":"2.0" } "#,
            #"{"params":"# + params + #","id":7,"jsonrpc":"2\u002e0","method":"\u0078","params":[1]}"#,
        ]
        for line in lines {
            guard case .request(let id, let method, let found?) = decoder.classify(Data(line.utf8)) else {
                Issue.record("no params in \(line)")
                continue
            }
            #expect(id == .number(7))
            #expect(method == "x")
            #expect(String(decoding: found.json, as: UTF8.self) == params)
        }
        guard case .notification(_, nil) = decoder.classify(Data(#"{"jsonrpc":"2.0","method":"x"}"#.utf8)) else {
            Issue.record("params where there are none")
            return
        }
    }

    @Test("member names count as written or escaped, the first of a name wins, and a line may be part of a larger buffer")
    func memberNames() {
        // An escaped name is the name; the later duplicate is ignored, even a readable one after an unreadable first.
        guard case .request(.number(1), "m", let params?) = decoder.classify(Data(#"{"jsonrpc":"2.0","\u0069d":1,"id":2,"method":"m","par\u0061ms":{"a":1},"params":{"b":2}}"#.utf8)) else {
            Issue.record("escaped names not read")
            return
        }
        #expect(String(decoding: params.json, as: UTF8.self) == #"{"a":1}"#)
        #expect(error(#"{"jsonrpc":"2.0","id":1,"method":"\ud800","method":"m"}"#)?.code == -32700)
        // Names longer than every name that counts are ignored, whatever they hold.
        guard case .notification("m", nil) = decoder.classify(Data(#"{"jsonrpc":"2.0","method":"m","a much longer member name":"\ud800"}"#.utf8)) else {
            Issue.record("a long unknown name was not ignored")
            return
        }
        // A line that is a slice of a larger buffer: offsets count from the line's first byte.
        let buffer = Data(#"xx{"jsonrpc":"2.0","id":7,"method":"m","params":[1,2]}yy"#.utf8)
        let line = buffer.dropFirst(2).dropLast(2)
        guard case .request(.number(7), "m", let sliced?) = decoder.classify(line) else {
            Issue.record("a sliced line was not read")
            return
        }
        #expect(String(decoding: sliced.json, as: UTF8.self) == "[1,2]")
    }

    @Test("requests and notifications are told apart")
    func classification() {
        guard case .request(let id, let method, _) = decoder.classify(Data(#"{"jsonrpc":"2.0","id":"a","method":"memo/list"}"#.utf8)) else {
            Issue.record("not a request")
            return
        }
        #expect(id == .string("a"))
        #expect(method == "memo/list")
        guard case .notification(let name, _) = decoder.classify(Data(#"{"jsonrpc":"2.0","method":"initialized"}"#.utf8)) else {
            Issue.record("not a notification")
            return
        }
        #expect(name == "initialized")
    }

    @Test("each kind of bad line gets its JSON-RPC error")
    func badLines() {
        #expect(error("not json")?.code == -32700)
        #expect(error("not json")?.id == nil)
        #expect(error("42")?.code == -32600)
        #expect(error("[]")?.code == -32600)
        #expect(error(#"[{"jsonrpc":"2.0","id":1,"method":"memo/list"}]"#)?.code == -32600)
        #expect(error(#"{"jsonrpc":"1.0","id":3,"method":"memo/list"}"#)! == (RequestID.number(3), -32600))
        #expect(error(#"{"id":3,"method":"memo/list"}"#)?.code == -32600)
        #expect(error(#"{"jsonrpc":"2.0","id":{"a":1},"method":"memo/list"}"#)! == (nil, -32600))
        #expect(error(#"{"jsonrpc":"2.0","id":1.5,"method":"memo/list"}"#)?.code == -32600)
        #expect(error(#"{"jsonrpc":"2.0","id":null,"method":"memo/list"}"#)?.code == -32600)
        #expect(error(#"{"jsonrpc":"2.0","id":1,"method":7}"#)! == (RequestID.number(1), -32600))
        #expect(error(#"{"jsonrpc":"2.0","id":1,"result":{}}"#)! == (nil, -32600))
        #expect(error(#"{"jsonrpc":"2.0","id":1}"#)?.code == -32600)
        #expect(error(Data([0x7B, 0xFF, 0xFE, 0x7D]))?.code == -32700)
        #expect(error(#"{"jsonrpc":"2.0","id":1,"result":null}"#)! == (nil, -32600))
        for notJSON in [#"{"jsonrpc":"2.0","id":1,"method":"m",}"#, #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"limit":[1,]}}"#,
                        #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"offset":01}}"#, #"{"a":1} {"b":2}"#, #"{"a":tru}"#,
                        #"{"a":"\x"}"#, #"{"a":"\u12"}"#, #"{"a":1.}"#, #"{"a":-}"#, #"{"a" 1}"#, #"{1:2}"#, #"{"a":1"#, #"{"a":"b"#,
                        #"{"a":NaN}"#, "{\"a\":1}\u{0}"] {
            #expect(error(notJSON)! == (nil, -32700), "\(notJSON)")
        }
        #expect(error(#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1e400,-0.5E-3,true,false,null,"\u00e9\n"]}}"#) == nil)
        #expect(error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"text\":\"a\u{0}b\"}}")! == (nil, -32700))
        #expect(error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"text\":\"a\tb\"}}")! == (nil, -32700))
        #expect(error(Data(#"{"jsonrpc":"2.0",\#u{0}"id":1,"method":"memo/list"}"#.utf8))?.code == -32700)
    }

    @Test("bytes that are not UTF-8 are named, wherever they stand and whatever else is wrong with the line")
    func notUTF8() {
        func message(_ line: Data) -> String? {
            if case .invalid(nil, let error) = decoder.decode(line) { return error.message }
            return nil
        }
        let notUTF8 = "Parse error: the line is not valid UTF-8"
        let head = Data(#"{"jsonrpc":"2.0","id":1,"method":"memo/create","params":{"text":""#.utf8)
        let korean = Data("회의 메모, meeting notes ".utf8)
        for bad in [[0xFF], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0x80], [0xF4, 0x90, 0x80, 0x80]] as [[UInt8]] {
            // Inside the text, after a long run of text (where the check takes eight bytes at a time).
            let inText = head + Data(repeating: 0x61, count: 100) + korean + Data(bad) + korean + Data(#""}}"#.utf8)
            #expect(message(inText) == notUTF8, "\(bad)")
            // In a member name, in a value the server does not read, and outside any string.
            #expect(message(Data(#"{"jsonrpc":"2.0","id":1,"method":"m","params":{""#.utf8) + Data(bad) + Data(#"":1}}"#.utf8)) == notUTF8)
            #expect(message(Data(#"{"jsonrpc":"2.0","id":1,"method":"m","x":[""#.utf8) + Data(bad) + Data(#""]}"#.utf8)) == notUTF8)
            #expect(message(Data(bad) + Data(#"{"jsonrpc":"2.0","id":1,"method":"m"}"#.utf8)) == notUTF8)
            // After a fault of syntax, or of depth, that stops the check before it reaches them.
            #expect(message(Data(#"{"a":tru, "b":""#.utf8) + Data(bad) + Data(#""}"#.utf8)) == notUTF8)
            #expect(message(Data(String(repeating: "[", count: 70).utf8) + Data([0x22]) + Data(bad)) == notUTF8)
        }
        // Well-formed text of every length of sequence passes, and a syntax fault keeps its own message.
        #expect(error(head + korean + Data("é€😀\u{10FFFF}".utf8) + Data(#""}}"#.utf8)) == nil)
        #expect(message(Data(#"{"a":tru, "b":"회의"}"#.utf8)) == "Parse error: unexpected character at byte 5")
    }

    @Test("JSON nested 100,000 deep is refused without recursing into it")
    func deepNesting() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(error(deep)?.code == -32700)
        let deepParams = #"{"jsonrpc":"2.0","id":1,"method":"memo/list","params":"# + String(repeating: #"{"a":"#, count: 100_000) + "1" + String(repeating: "}", count: 100_000) + "}"
        #expect(error(deepParams)?.code == -32700)
        #expect(error(#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"text":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}}"#) == nil)
    }

    @Test("blank lines are ignored")
    func blankLines() {
        if case .ignored = decoder.classify(Data()) {} else { Issue.record("empty line answered") }
        if case .ignored = decoder.classify(Data("  ".utf8)) {} else { Issue.record("blank line answered") }
    }
}

@Suite("Params decoding")
struct ParamsDecodingTests {
    /// Decodes the params of `members` (a JSON object's members, such as `{"params":…}`) sent as a request,
    /// the way the server does: the message decoder finds the params, the handler decodes them.
    func decode<P: Decodable>(_ type: P.Type, _ members: String) throws(ResponseError) -> P {
        let line = #"{"jsonrpc":"2.0","id":1,"method":"m""# + (members == "{}" ? "}" : "," + members.dropFirst())
        guard case .request(_, _, let params) = MessageDecoder(maxNestingDepth: 64).classify(Data(line.utf8)) else {
            Issue.record("not a request: \(line)")
            throw .internalError("not a request")
        }
        return try ParamsDecoding.decode(type, from: params)
    }

    func invalid<P: Decodable>(_ type: P.Type, _ members: String) -> ResponseError? {
        do {
            _ = try decode(type, members)
            return nil
        } catch {
            return error
        }
    }

    @Test("errors name the param at fault")
    func namesTheParam() {
        let missing = invalid(UpdateRequest.self, #"{"params":{"id":"6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90"}}"#)
        #expect(missing?.code == .invalidParams)
        #expect(missing?.data?["param"] == "text")
        #expect(invalid(UpdateRequest.self, #"{"params":{"id":"6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90","text":5}}"#)?.data?["param"] == "text")
        #expect(invalid(UpdateRequest.self, #"{"params":{"id":"nope","text":""}}"#)?.data?["param"] == "id")
        #expect(invalid(UpdateRequest.self, #"{"params":{"id":null,"text":""}}"#)?.data?["param"] == "id")
        #expect(invalid(ListRequest.self, #"{"params":{"limit":"ten"}}"#)?.data?["param"] == "limit")
        #expect(invalid(ListRequest.self, #"{"params":[1]}"#)?.code == .invalidParams)
        #expect(invalid(ListRequest.self, #"{"params":{"limit":2.5}}"#)?.data?["param"] == "limit")
        #expect(invalid(ListRequest.self, #"{"params":{"offset":1e400}}"#)?.code == .invalidParams)
        #expect(invalid(UpdateRequest.self, #"{"params":{"id":"6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90","text":"","baseVersion":1e30}}"#)?.data?["param"] == "baseVersion")
        #expect(invalid(ImportRequest.self, #"{"params":{"memos":[1, {"a":{}}], "path": 3}}"#)?.code == .invalidParams)
    }

    @Test("absent, null or empty-array params mean no params; unknown params are ignored")
    func lenientWhereLSPIs() throws {
        #expect(try decode(ListRequest.self, "{}") == ListRequest())
        #expect(try decode(ListRequest.self, #"{"params":null}"#) == ListRequest())
        // Neovim's JSON encoder writes an empty Lua table as an array.
        #expect(try decode(ListRequest.self, #"{"params":[]}"#) == ListRequest())
        #expect(try decode(ListRequest.self, #"{"params":[ ]}"#) == ListRequest())
        #expect(try decode(ListRequest.self, #"{"params":{"limit":3,"colour":"red"}}"#) == ListRequest(limit: 3))
        #expect(try decode(ListRequest.self, #"{"params" : {"limit":3} , "params":{"limit":4}}"#) == ListRequest(limit: 3))
    }
}
