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
    ])
    func derivation(text: String, title: String, body: String) {
        let derived = MemoText(text)
        #expect(derived.title == title)
        #expect(derived.body == body)
    }

    @Test("the preview is the body on one line, cut to about 100 characters")
    func preview() {
        #expect(MemoText("T\n  a\n\n b\tc  ").preview == "a b c")
        let long = MemoText("T\n" + String(repeating: "가", count: 300)).preview
        #expect(long.count == MemoText.previewLength + 1)
        #expect(long.hasSuffix("…"))
    }
}
