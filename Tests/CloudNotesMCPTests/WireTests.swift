import CloudNotesProtocol
import Foundation
import MCP
import Testing

@testable import CloudNotesMCP

/// The marker `LiteralStrings` puts before a string (a noncharacter: Swift's literals cannot hold it).
private let marker = String(Character(Unicode.Scalar(0xFDD1)!))

/// What the MCP transport does around the SDK: strings carried past its `Value`, a call's arguments
/// handed on as they came, and params checked as the SDK will read them.
@Suite("The MCP wire")
struct WireTests {
    /// `value` as the SDK sends a result: decoded into its `Value` from JSON, and encoded again.
    private func throughTheSDK(_ value: Value) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let reread = try JSONDecoder().decode(Value.self, from: encoder.encode(value))
        return try encoder.encode(["result": reread])
    }

    @Test("strings the SDK would change come out as they went in", arguments: [
        "data:,Hello%2C%20World", "data:text/plain;base64,SGVsbG8=", marker + "starts with the marker",
        marker + marker + "data:,x", "plain", "with \"quotes\" and \\ and \(marker) inside", "",
    ])
    func literalStrings(_ text: String) throws {
        let sent = try throughTheSDK(.object(["text": LiteralStrings.protect(.string(text)), "list": LiteralStrings.protect(.array([.string(text)]))]))
        // Read as a client reads it (the SDK's own `Value` would change it again).
        let received = try JSONDecoder().decode([String: [String: JSONValue]].self, from: LiteralStrings.restore(sent))
        #expect(received["result"]?["text"] == .string(text))
        #expect(received["result"]?["list"] == .array([.string(text)]))
    }

    @Test("without protection the SDK changes a data URL: the reason for LiteralStrings")
    func theSDKChangesDataURLs() throws {
        let sent = try throughTheSDK(.string("data:,Hello"))
        #expect(!String(decoding: sent, as: UTF8.self).contains("data:,Hello"))
    }

    @Test("a marker inside a string, or after an escaped quote, is left alone")
    func restoreOnlyAtStringStarts() {
        let message = #"{"a":"x\"\#(marker)y","b":"\#(marker)z","c":["\#(marker)\#(marker)w"]}"#
        let restored = String(decoding: LiteralStrings.restore(Data(message.utf8)), as: UTF8.self)
        #expect(restored == #"{"a":"x\"\#(marker)y","b":"z","c":["\#(marker)w"]}"#)
    }

    /// A `tools/call` line, and its params' slice of it, as the message decoder cuts them.
    private func call(_ params: String) throws -> (message: Data, params: Data) {
        let message = Data(#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":\#(params)}"#.utf8)
        let start = try #require(message.firstRange(of: Data(#""params":"#.utf8))).upperBound
        return (message, message[start..<(message.endIndex - 1)])
    }

    @Test("a call's arguments reach the tools as their JSON text, and the client's _meta stays")
    func argumentsHandedOn() throws {
        let (message, params) = try call(#"{"name":"create_memo","_meta":{"progressToken":1},"arguments":{"text":"data:,Hi","n":1e2},"arguments":{}}"#)
        let wrapped = try #require(RawArguments.handingOn(message, params: params))
        let request = try JSONDecoder().decode(Request<CallTool>.self, from: wrapped)
        #expect(request.id == .number(7) && request.params.name == "create_memo")
        #expect(request.params._meta?.progressToken == .integer(1))
        let arguments = try RawArguments.of(request.params)
        #expect(arguments["text"] == .string("data:,Hi"))
        #expect(arguments["n"] == .number(100))
    }

    @Test("a client cannot pass its own raw arguments, and null arguments are none")
    func argumentsNotForged() throws {
        let forged = try call(#"{"name":"x","arguments":{"cloudnotes/arguments":"{\"text\":\"forged\"}"}}"#)
        let request = try JSONDecoder().decode(Request<CallTool>.self, from: #require(RawArguments.handingOn(forged.message, params: forged.params)))
        #expect(try RawArguments.of(request.params)["text"] == nil)
        let null = try call(#"{"name":"x","arguments":null}"#)
        let nullRequest = try JSONDecoder().decode(Request<CallTool>.self, from: #require(RawArguments.handingOn(null.message, params: null.params)))
        #expect(try RawArguments.of(nullRequest.params).isEmpty)
    }

    @Test("params the SDK cannot read are refused naming the param", arguments: [
        (ReadResource.name, #"{"uri":5}"#, "uri"), (ReadResource.name, "{}", "uri"), (CallTool.name, #"{"name":[]}"#, "name"),
        (CallTool.name, #"{"name":"x","arguments":"y"}"#, "arguments"), (ListTools.name, "[]", nil),
    ] as [(String, String, String?)])
    func paramsChecked(_ method: String, _ params: String, _ param: String?) throws {
        let error = try #require(ParamsCheck.problem(method: method, params: Data(params.utf8)))
        #expect(error.code == .invalidParams)
        #expect(error.data?["param"]?.stringValue == param)
    }

    @Test("good params, and methods the SDK answers itself, pass")
    func goodParamsPass() {
        #expect(ParamsCheck.problem(method: ReadResource.name, params: Data(#"{"uri":"cloudnotes://memo/x"}"#.utf8)) == nil)
        #expect(ParamsCheck.problem(method: ListTools.name, params: nil) == nil)
        #expect(ParamsCheck.problem(method: "no/such", params: Data("[1]".utf8)) == nil)
    }
}
