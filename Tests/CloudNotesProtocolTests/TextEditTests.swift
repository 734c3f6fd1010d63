import CloudNotesProtocol
import Testing

@Suite("Text edits")
struct TextEditTests {
    static func apply(_ edits: [TextEdit], to text: String, maxBytes: Int = 1 << 20) throws(ResponseError) -> String {
        try TextEdit.apply(edits, to: text, maxBytes: maxBytes)
    }

    @Test("edits apply in order, each to the text the ones before it left, in UTF-8 bytes")
    func appliesInOrder() throws {
        // "👍" is 4 bytes, "é" 2: offsets are bytes, not characters or UTF-16 units.
        let text = "é👍x"
        #expect(try Self.apply([TextEdit(start: 6, end: 6, text: "y")], to: text) == "é👍yx")
        #expect(try Self.apply([TextEdit(start: 2, end: 6, text: "")], to: text) == "éx")
        #expect(try Self.apply([
            TextEdit(start: 7, end: 7, text: "!"),   // "é👍x!"
            TextEdit(start: 0, end: 2, text: "e"),   // "e👍x!": the next offsets count in this text
            TextEdit(start: 1, end: 5, text: "--"),  // "e--x!"
        ], to: text) == "e--x!")
        #expect(try Self.apply([], to: text) == text)
        // Between a letter and its combining accent is a code point boundary: allowed.
        #expect(try Self.apply([TextEdit(start: 1, end: 1, text: "x")], to: "e\u{301}") == "ex\u{301}")
    }

    @Test("a range outside the text or inside a code point's bytes is refused, naming the edit")
    func refusesBadRanges() {
        let cases: [([TextEdit], String)] = [
            ([TextEdit(start: 0, end: 8, text: "")], "edits[0]"),                                   // past the end
            ([TextEdit(start: 3, end: 2, text: "")], "edits[0]"),                                   // reversed
            ([TextEdit(start: 0, end: 0, text: "a"), TextEdit(start: 4, end: 4, text: "")], "edits[1]"),  // inside 👍 once "a" is in
            ([TextEdit(start: 0, end: 1, text: "")], "edits[0]"),                                   // ends inside é
            ([TextEdit(start: 5, end: 7, text: "")], "edits[0]"),                                   // starts inside 👍
        ]
        for (edits, param) in cases {
            let error = #expect(throws: ResponseError.self) { try Self.apply(edits, to: "é👍x") }
            #expect(error?.code == .invalidParams && error?.data?["param"] == .string(param), "\(edits)")
        }
    }

    @Test("a result over the memo limit, or more edits than a request may carry, is refused; at the limits, not")
    func limit() throws {
        #expect(try Self.apply([TextEdit(start: 3, end: 3, text: "d")], to: "abc", maxBytes: 4) == "abcd")
        let error = #expect(throws: ResponseError.self) {
            try Self.apply([TextEdit(start: 3, end: 3, text: "de")], to: "abc", maxBytes: 4)
        }
        #expect(error?.data?["param"] == .string("edits"))
        let insertions = Array(repeating: TextEdit(start: 0, end: 0, text: "x"), count: TextEdit.maxCount)
        #expect(try Self.apply(insertions, to: "") == String(repeating: "x", count: TextEdit.maxCount))
        let tooMany = #expect(throws: ResponseError.self) { try Self.apply(insertions + [insertions[0]], to: "") }
        #expect(tooMany?.data?["param"] == .string("edits") && tooMany?.message.contains("more than the 1000") == true)
    }
}
