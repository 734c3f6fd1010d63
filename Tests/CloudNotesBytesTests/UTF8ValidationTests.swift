import CloudNotesTestSupport
import Testing

@testable import CloudNotesBytes

/// The line check must accept exactly what the standard library's does: a line it wrongly accepts would
/// reach the params decoder, which trusts it (`CheckedParams`), and one it wrongly refuses is a lost edit.
@Suite("UTF-8 check of a line")
struct UTF8ValidationTests {
    func standardLibrarySays(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    /// The check's answer, after making sure its two ways (the vector instructions where the processor has
    /// them, the automaton elsewhere) give the same.
    func checkSays(_ bytes: [UInt8]) -> Bool {
        let answer = bytes.withUnsafeBytes(UTF8Validation.isValid)
        #expect(bytes.withUnsafeBytes(UTF8Validation.isValidByAutomaton) == answer, "the automaton differs on \(bytes)")
        return answer
    }

    /// Before a sequence, ASCII of every length up to two words, so that it starts at every place in a
    /// word, and is reached both by the word-at-a-time skip and byte by byte.
    func expectAgreement(_ sequence: [UInt8], _ comment: String = "") {
        for lead in 0..<16 {
            for tail in [0, 9] {
                let bytes = [UInt8](repeating: 0x61, count: lead) + sequence + [UInt8](repeating: 0x62, count: tail)
                #expect(checkSays(bytes) == standardLibrarySays(bytes), "\(sequence) after \(lead) ASCII bytes \(comment)")
            }
        }
    }

    @Test("agrees on every one- and two-byte sequence")
    func everyShortSequence() {
        for first in UInt8.min...UInt8.max {
            expectAgreement([first])
            for second in UInt8.min...UInt8.max {
                let bytes = [first, second]
                #expect(checkSays(bytes) == standardLibrarySays(bytes), "\(bytes)")
            }
        }
    }

    @Test("agrees on every three- and four-byte sequence built from the bytes at the edges of each range")
    func sequencesAtTheEdges() {
        // The ends of every range table 3-7 of Unicode names, and their neighbours.
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                              0xE0, 0xE1, 0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        var accepted = 0
        for a in edges {
            for b in edges {
                for c in edges {
                    expectAgreement([a, b, c])
                    for d in edges {
                        let bytes = [a, b, c, d]
                        #expect(checkSays(bytes) == standardLibrarySays(bytes), "\(bytes)")
                        if standardLibrarySays(bytes) { accepted += 1 }
                    }
                }
            }
        }
        #expect(accepted > 2_000, "the cases must include valid sequences, not only faults")
    }

    @Test("accepts text of every length of character, and refuses it cut short or with one byte changed")
    func realisticText() {
        var generator = SplitMix64(seed: 0x5554_4638)
        let samples: [Character] = ["a", " ", "\n", "é", "ß", "회", "의", "メ", "€", "𝄞", "😀", "\u{10FFFF}", "\u{FFFD}"]
        for _ in 0..<2_000 {
            let text = String((0..<Int.random(in: 0...60, using: &generator)).map { _ in samples.randomElement(using: &generator)! })
            var bytes = Array(text.utf8)
            #expect(checkSays(bytes), "\(text)")
            guard !bytes.isEmpty else { continue }
            let cut = Array(bytes[..<Int.random(in: 0..<bytes.count, using: &generator)])
            #expect(checkSays(cut) == standardLibrarySays(cut), "\(cut)")
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0x80...0xFF, using: &generator)
            #expect(checkSays(bytes) == standardLibrarySays(bytes), "\(bytes)")
        }
    }
}
