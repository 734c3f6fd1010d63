import CloudNotesTestSupport
import Foundation
import Testing

@testable import CloudNotesStore

/// Case folded as the index folds it (`IndexFolding`), and the search of texts with it
/// (`cloudnotes_contains`): it must find exactly what folding every text finds, while folding only the
/// texts that hold an anchor.
@Suite("Caseless search as the index folds")
struct CaselessPatternTests {
    /// What the search must agree with: both folded whole, then a byte search.
    private func reference(_ text: Data, _ query: String) -> Bool {
        IndexFolding.folded(text).firstRange(of: Array(IndexFolding.fold(query).utf8)) != nil
    }

    @Test("the table is SQLite's tokenizer's: asked about every character, it folds the same ones the same way")
    func tableIsTheTokenizers() throws {
        let every = (UInt32(1)...0x10FFFF).compactMap(Unicode.Scalar.init)
        let all = try IndexFolding.derivedTable(of: every)
        #expect(all == IndexFolding.table, "\(all.filter { IndexFolding.table[$0.key] != $0.value }.map(\.key.value))")
        #expect(IndexFolding.table.count > 900)
        for (from, to) in [("Ä", "ä"), ("ς", "σ"), ("Σ", "σ"), ("µ", "μ"), ("\u{017F}", "s"), ("\u{212A}", "k"), ("Z", "z")] as [(Unicode.Scalar, Unicode.Scalar)] {
            #expect(IndexFolding.fold(from) == to, "\(from.value)")
        }
        #expect(IndexFolding.fold("İ") == "İ")  // the index leaves it; String.lowercased() does not
        #expect(IndexFolding.fold("\u{1FBE}") == "ι")  // which Swift does not count as changed by folding
        // ASCII is folded without the table: the same answers.
        for value in UInt8(0)..<0x80 {
            let scalar = Unicode.Scalar(value)
            #expect(IndexFolding.fold(String(scalar)) == String(IndexFolding.fold(scalar)), "\(value)")
            #expect(IndexFolding.isFoldFree(String(scalar)) == (IndexFolding.charactersFolding(to: scalar) == [scalar]), "\(value)")
        }
        // The only characters beyond ASCII folded into it: what `IndexFolding.needsSecondLook` relies on.
        #expect(Set(IndexFolding.table.filter { !$0.key.isASCII && $0.value.isASCII }.keys) == ["\u{212A}", "\u{017F}"])
    }

    @Test("folding bytes folds each character through the table, and reads bytes that are not UTF-8 as U+FFFD")
    func foldingBytes() {
        for value in UInt32(0)..<0x20000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = "a\(scalar)Z"
            #expect(IndexFolding.folded(Data(text.utf8)) == Array("a\(IndexFolding.fold(scalar))z".utf8), "\(value)")
        }
        let broken = Data([0x41, 0xFF, 0xC3, 0x84, 0xE2, 0x82])  // "A", a stray byte, "Ä", a cut-off character
        #expect(IndexFolding.folded(broken) == Array("a\u{FFFD}ä\u{FFFD}".utf8))
    }

    @Test("anchors are every character that folds to the chosen one, outside ASCII first")
    func anchors() {
        func anchors(_ query: String) -> Set<String>? {
            CaselessPattern(query).anchors.map { Set($0.map { String(decoding: $0, as: UTF8.self) }) }
        }
        #expect(anchors("ä") == ["ä", "Ä"])
        #expect(anchors("Ab") == ["a", "A"] || anchors("Ab") == ["b", "B"])
        #expect(anchors("1Σ") == ["σ", "Σ", "ς"])
        #expect(anchors("µ") == ["μ", "Μ", "µ"])
        #expect(anchors("\u{212A}") == ["k", "K", "\u{212A}"])
        #expect(anchors("İ") == ["İ"])
        #expect(anchors("\u{FFFD}") == nil)  // it also stands for bytes that are not UTF-8: every text is read
    }

    @Test("finds exactly what folding every text finds")
    func agreesWithFoldingEverything() {
        let alphabet: [Unicode.Scalar] = [
            "a", "A", "k", "K", "\u{212A}", "s", "\u{017F}", "i", "İ", "ä", "Ä", "σ", "ς", "Σ", "µ", "μ", "회", "\u{0}", "\u{FFFD}",
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

    @Test("a search finds the same memos whether the index holds them or not, and so does the check of one memo")
    func throughTheStore() throws {
        let store = try MemoStore()
        let texts = ["Äpfel und Birnen", "äpfel", "APFEL", "ΛΌΓΟΣ", "λόγοσ", "5µm", "Tho\u{017F}e", "İstanbul", "회의 Ä"]
        var memos: [StoredMemo] = []
        for (seq, text) in texts.enumerated() { memos.append(try store.create(text: text, now: Int64(seq), filter: nil).memo) }
        for indexed in [false, true] {
            if indexed { try store.indexEverything() }
            for query in ["ä", "Ä", "äp", "Äpfel", "λόγος", "ς", "5μm", "μ", "ſ", "THOSE", "i̇", "İst", "ä\u{0}"] {
                let filter = try #require(SearchFilter(query))
                store.cache.invalidate()  // a new search, not the list kept from the last one
                let expected = texts.indices.filter { reference(Data(texts[$0].utf8), query) }
                #expect(try store.count(filter: filter) == expected.count, "\(query), indexed: \(indexed)")
                for index in texts.indices {
                    let stored = try #require(try store.writer.read { db in try MemoStore.liveMemo(id: memos[index].id, db) })
                    #expect(try store.writer.read { db in try store.matches(stored, filter: filter, db) } == expected.contains(index),
                            "\(query) in \(texts[index]), indexed: \(indexed)")
                }
            }
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
