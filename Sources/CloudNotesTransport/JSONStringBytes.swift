// MARK: - Bytes that matter inside a JSON string

/// Finds the bytes a JSON string cannot hold as they are: `"`, `\` and control characters (below 0x20).
///
/// Memo texts are long runs of ordinary bytes, and both the reader (checking a request's syntax) and
/// the writer (escaping a reply) look for these few bytes in them. Testing eight bytes at a time, with
/// word arithmetic, makes a 100 KB text cost microseconds instead of a loop turn per byte.
enum JSONStringBytes {
    /// The index of the first such byte in `bytes` at or after `start`, or `bytes.count` when there is none.
    static func firstSpecial(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress else { return bytes.count }
        var index = start
        let raw = UnsafeRawPointer(base)
        while index + 8 <= bytes.count {
            let flags = specialFlags(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self)))
            // The lowest flag marks the first special byte: a run of text ends without a byte-by-byte walk.
            if flags != 0 { return index + flags.trailingZeroBitCount / 8 }
            index += 8
        }
        while index < bytes.count, !isSpecial(bytes[index]) {
            index += 1
        }
        return index
    }

    static func isSpecial(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The high bit of each of the eight bytes of `word` (first byte lowest) that may be special.
    ///
    /// Zero exactly when no byte is special, and the lowest flag is always a special byte: a flag above
    /// it may be false (a borrow carried from the byte below), which no caller looks at.
    private static func specialFlags(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        // A byte below n (n ≤ 128) sets its high bit in (word - n·ones) & ~word, as in "Bit Twiddling Hacks".
        let control = (word &- ones &* 0x20) & ~word & highBits
        let quotes = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
        let backslashes = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
        let zeroQuote = (quotes &- ones) & ~quotes & highBits
        let zeroBackslash = (backslashes &- ones) & ~backslashes & highBits
        return control | zeroQuote | zeroBackslash
    }
}
