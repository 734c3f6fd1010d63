import CloudNotesTestSupport
import Foundation
import Testing

@testable import CloudNotesStore

/// The search of texts without case beyond ASCII (`cloudnotes_contains`): it must find exactly what
/// lower-casing every text with `String.lowercased()` finds, while lower-casing only the texts that
/// hold an anchor.
@Suite("Caseless search beyond ASCII")
struct CaselessPatternTests {
    /// What the search must agree with: both lower-cased whole, then a byte search.
    private func reference(_ text: Data, _ query: String) -> Bool {
        String(decoding: text, as: UTF8.self).lowercased().utf8.firstRange(of: query.lowercased().utf8) != nil
    }

    @Test("lower-casing bytes equals String.lowercased(), character by character and in text that is not UTF-8")
    func lowerCasingBytes() {
        for value in UInt32(0)..<0x20000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a\(scalar)Z"
            #expect(CaselessPattern.lowerCased(Data(text.utf8)) == Array(text.lowercased().utf8), "\(value)")
        }
        let broken = Data([0x41, 0xFF, 0xC3, 0x84, 0xE2, 0x82])  // "A", a stray byte, "Ä", a cut-off character
        #expect(CaselessPattern.lowerCased(broken) == Array(String(decoding: broken, as: UTF8.self).lowercased().utf8))
    }

    @Test("anchors are every character whose lower case holds the chosen one, outside ASCII first")
    func anchors() {
        func anchors(_ query: String) -> Set<String>? {
            CaselessPattern(query).anchors.map { Set($0.map { String(decoding: $0, as: UTF8.self) }) }
        }
        #expect(anchors("ä") == ["ä", "Ä"])
        #expect(anchors("Ab") == ["a", "A"] || anchors("Ab") == ["b", "B"])
        #expect(anchors("1ß") == ["ß", "ẞ"])  // U+1E9E lower-cases to ß
        #expect(anchors("\u{212A}") == ["k", "K", "\u{212A}"])  // KELVIN SIGN lower-cases to k
        #expect(anchors("σ") == ["σ", "Σ"])
        #expect(anchors("i\u{307}") == ["\u{307}", "İ"])  // İ lower-cases to i and a combining dot
        #expect(anchors("\u{FFFD}") == nil)  // it also stands for bytes that are not UTF-8: every text is read
    }

    @Test("finds exactly what lower-casing every text finds")
    func agreesWithLowerCasingEverything() {
        let alphabet: [Unicode.Scalar] = [
            "a", "A", "k", "K", "\u{212A}", "i", "I", "İ", "\u{307}", "ä", "Ä", "ß", "ẞ", "σ", "ς", "Σ", "회", "\u{0}", "\u{FFFD}",
        ]
        var random = SplitMix64(seed: 0xCA5E)
        func randomString(_ lengths: ClosedRange<Int>) -> String {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: lengths, using: &random) { scalars.append(alphabet.randomElement(using: &random)!) }
            return String(scalars)
        }
        var texts = (0..<300).map { _ in Data(randomString(0...8).utf8) }
        texts.append(Data([0xC3, 0x41, 0xFF, 0xC3, 0x84]))  // not UTF-8: each bad byte reads as U+FFFD
        var queries = alphabet.map { String($0) }
        for _ in 0..<300 { queries.append(randomString(1...3)) }
        for query in queries {
            let pattern = CaselessPattern(query)
            for text in texts {
                #expect(pattern.isFound(in: text) == reference(text, query),
                        "\(query.unicodeScalars.map(\.value)) in \(Array(text))")
            }
        }
    }

    @Test("the byte search finds a needle anywhere, after false starts, and not past the end")
    func byteSearch() {
        let haystack = Array("aab aabc".utf8)
        #expect(CaselessPattern.holds(haystack, Array("aabc".utf8)))
        #expect(CaselessPattern.holds(haystack, Array("b a".utf8)))
        #expect(CaselessPattern.holds(haystack, Array("c".utf8)))
        #expect(!CaselessPattern.holds(haystack, Array("abd".utf8)))
        #expect(!CaselessPattern.holds(haystack, Array("bcx".utf8)))  // would run past the end
        #expect(CaselessPattern.holds(haystack, []))
        #expect(!CaselessPattern.holds([UInt8](), Array("a".utf8)))
    }

    @Test("a search reads the texts of the memos with it, and finds what lower-casing finds")
    func throughTheStore() throws {
        let store = try MemoStore()
        let texts = ["Äpfel und Birnen", "äpfel", "APFEL", "\u{1E9E}-Straße", "Σοφία", "회의 Ä"]
        for (seq, text) in texts.enumerated() { _ = try store.create(text: text, now: Int64(seq), filter: nil) }
        for query in ["ä", "Ä", "äp", "ß", "ẞ", "σ", "Äpfel", "ä\u{0}"] {
            store.cache.invalidate()  // a new search, not the list kept from the last one
            let expected = texts.filter { reference(Data($0.utf8), query) }.count
            #expect(try store.count(filter: SearchFilter(query)) == expected, "\(query)")
        }
    }

    // MARK: - ASCII queries, folded as the index folds them

    @Test("the second look finds an ASCII query through KELVIN SIGN and LONG S, past a NUL too, and nothing else")
    func secondLookThroughKelvinAndLongS() {
        func found(_ text: String, _ query: String) -> Bool {
            IndexFolding.holdsThroughKelvinOrLongS(Data(text.utf8), Data(query.utf8))
        }
        #expect(found("0 \u{212A}ELVIN", "kelvin"))
        #expect(found("Tho\u{017F}e", "OSE"))
        #expect(found("a\u{0}\u{212A}", "k"))  // past a NUL, which LIKE ends the text at
        #expect(!found("kelvin", "kelvin"))  // no KELVIN SIGN or LONG S: LIKE reads it right
        #expect(!found("\u{212A}", "s"))
        #expect(IndexFolding.folded(Data("A\u{212A}\u{017F}ä\u{0}Z회".utf8)) == Array("aksä\u{0}z회".utf8))
        #expect(IndexFolding.needsSecondLook("desK") && IndexFolding.needsSecondLook("S"))
        #expect(!IndexFolding.needsSecondLook("meeting"))
    }
}
