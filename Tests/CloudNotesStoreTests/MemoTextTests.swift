import CloudNotesTestSupport
import Testing

@testable import CloudNotesStore

@Suite("Title, body and preview")
struct MemoTextTests {
    @Test("the title is the first non-blank line, trimmed; the body is everything after it", arguments: [
        ("Hello\nworld", "Hello", "world"),
        ("\n\n  Hello  \r\nworld\r\n", "Hello", "world\r\n"),
        ("   \n\t\n", "", ""),
        ("", "", ""),
        ("제목 🎉\n본문\n\n둘째 줄", "제목 🎉", "본문\n\n둘째 줄"),
        ("only a title", "only a title", ""),
        ("  \u{3000}\n 한국어 " + String(repeating: "긴 제목 ", count: 500) + "\n\u{0}본문", "한국어" + String(repeating: " 긴 제목", count: 500), "\u{0}본문"),
    ])
    func derivation(text: String, title: String, body: String) {
        let derived = MemoText(text)
        #expect(derived.title == title)
        #expect(derived.body == body)
    }

    @Test("a line ends at the first byte \\n of a slice, wherever the slice starts, whatever precedes the byte")
    func firstLineEnd() {
        var random = SplitMix64(seed: 11)
        let pieces = ["a", "한", "🎉", "\r", "\n", "\u{0}", " ", "é"]
        for _ in 0..<300 {
            let text = String((0..<Int(random.next() % 40)).map { _ in pieces[Int(random.next() % UInt64(pieces.count))] }.joined())
            let start = text.utf8.index(text.utf8.startIndex, offsetBy: Int(random.next() % UInt64(text.utf8.count + 1)))
            let slice = text[start...]
            #expect(slice.firstLineEnd == slice.utf8.firstIndex(of: UInt8(ascii: "\n")), "\(Array(text.utf8))")
        }
    }

    @Test("a list row's title is cut to 200 characters (grapheme clusters), not bytes", arguments: [
        (String(repeating: "a", count: 200), false), (String(repeating: "a", count: 201), true),
        (String(repeating: "한", count: 200), false), (String(repeating: "한", count: 201), true),
        (String(repeating: "👨‍👩‍👧", count: 200), false), ("e\u{301}" + String(repeating: "é", count: 199), false),
        (String(repeating: "e\u{301}", count: 201), true),
    ])
    func listTitle(title: String, isCut: Bool) {
        let listed = MemoText(title + "\nbody").listTitle
        if isCut {
            #expect(listed == String(title.prefix(MemoText.listTitleLength)) + "…")
        } else {
            #expect(listed == title)
        }
        #expect(listed.count == MemoText.listTitleLength + (isCut ? 1 : 0))
    }

    @Test("the preview is the body on one line, cut to about 100 characters")
    func preview() {
        #expect(MemoText("T\n  a\n\n b\tc  ").preview == "a b c")
        let long = MemoText("T\n" + String(repeating: "가", count: 300)).preview
        #expect(long.count == MemoText.previewLength + 1)
        #expect(long.hasSuffix("…"))
    }

    @Test("the scalar walk gives the character walk's preview, and hands over at joining scalars", arguments: [
        "  a\r\n\r\n b\tc  ",
        "회의 meeting 会议 café\u{A0}x\u{85}y",
        String(repeating: "가나다 abc ", count: 40),
        String(repeating: "x", count: 99) + "\r\n" + "yz",
        "e\u{301}" + String(repeating: "é", count: 120),
        "👍🏽 family 👨‍👩‍👧",
        "\u{1100}\u{1161}\u{11A8} 각",
        "가\u{11A8}",
    ])
    func scalarPreview(body: String) {
        let walked = MemoText.characterPreview(of: Substring(body))
        if let simple = MemoText.simplePreview(of: Substring(body)) {
            #expect(simple == walked)
        } else {
            #expect(body.unicodeScalars.contains { $0.value >= 0x300 && !(0xAC00...0xD7A3).contains($0.value) })
        }
        #expect(MemoText("T\n" + body).preview == walked)
    }

    @Test("random texts of simple scalars, now and then a joining one, get the character walk's preview")
    func randomPreviews() {
        let simple: [Unicode.Scalar] = [" ", "\n", "\r", "\t", "a", "Z", "é", "\u{A0}", "\u{85}", "가", "힣", "会"]
        let joining: [Unicode.Scalar] = ["\u{301}", "\u{11A8}", "\u{1161}", "\u{200D}", "\u{FE0F}", "👍", "\u{1F3FD}", "\u{1F1F0}"]
        var generator = SplitMix64(seed: 20_261_122)
        var handedOver = 0
        for _ in 0..<2000 {
            var body = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...180, using: &generator) {
                let pool = Int.random(in: 0..<400, using: &generator) == 0 ? joining : simple
                body.append(pool.randomElement(using: &generator)!)
            }
            let text = Substring(String(body))
            let walked = MemoText.characterPreview(of: text)
            if let scalarWalk = MemoText.simplePreview(of: text) {
                #expect(scalarWalk == walked, "\(text.debugDescription)")
            } else {
                handedOver += 1
            }
        }
        #expect(handedOver > 100 && handedOver < 1900, "both walks should be exercised")
    }
}
