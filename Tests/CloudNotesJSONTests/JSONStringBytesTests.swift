import Testing

@testable import CloudNotesJSON

@Suite("Special bytes of JSON strings")
struct JSONStringBytesTests {
    /// The plain definition, one byte at a time: what the sixteen-at-a-time search must agree with.
    func naiveFirstSpecial(_ bytes: [UInt8], from start: Int) -> Int {
        bytes[start...].firstIndex { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") } ?? bytes.count
    }

    @Test("finds the first quote, backslash or control byte wherever it stands, and nothing else")
    func agreesWithTheDefinition() {
        var generator = SystemRandomNumberGenerator()
        // Bytes next to the special ones (0x1F/0x20, 0x21/0x23, 0x5B/0x5D) and high bytes (a signed
        // comparison would take them for control bytes) catch an off-by-one in the vector comparisons.
        let alphabet: [UInt8] = [0x00, 0x0A, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x41, 0x7F, 0x80, 0xA0, 0xDF, 0xE0, 0xFF]
        let plain: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x41, 0x7F, 0x80, 0xA0, 0xDF, 0xE0, 0xFF]
        for round in 0..<3_000 {
            // Up to four vectors and a tail, so that a special byte stands in every lane of a vector, in
            // the tail, and after a vector without one.
            let length = Int.random(in: 0...70, using: &generator)
            // Mostly plain bytes, so that runs longer than a vector occur.
            var bytes = (0..<length).map { _ in plain.randomElement(using: &generator)! }
            for _ in 0..<(round % 3) where length > 0 {
                bytes[Int.random(in: 0..<length, using: &generator)] = alphabet.randomElement(using: &generator)!
            }
            for start in 0...length {
                let found = bytes.withUnsafeBufferPointer { JSONStringBytes.firstSpecial(in: $0, from: start) }
                #expect(found == naiveFirstSpecial(bytes, from: start), "\(bytes) from \(start)")
            }
        }
    }
}
