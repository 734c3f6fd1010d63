// MARK: - Lines

/// A text cut into lines that keep their "\n"; each line also has an id shared by equal lines.
///
/// Points into the string's storage, so it lives only inside `merge`'s `withUTF8` calls.
struct Lines {
    let text: UnsafeRawBufferPointer
    let ranges: [Range<Int>]
    let ids: [Int]

    /// The bytes of lines `range`, which follow one another in the text.
    subscript(range: Range<Int>) -> UnsafeRawBufferPointer {
        range.isEmpty ? UnsafeRawBufferPointer(start: nil, count: 0)
            : UnsafeRawBufferPointer(rebasing: text[ranges[range.lowerBound].lowerBound..<ranges[range.upperBound - 1].upperBound])
    }
}

/// Gives equal lines equal ids, comparing bytes: String equality would merge "e\u{301}" with "é".
///
/// A small open-addressing table keyed by a word-at-a-time hash: cutting and hashing lines is most of
/// a merge's time, and Dictionary's SipHash more than doubled it.
struct LineInterner {
    private var slots = [Int](repeating: -1, count: 64)
    private var firstSeen: [(digest: UInt64, line: UnsafeRawBufferPointer)] = []
    var count: Int { firstSeen.count }

    /// Cuts `text` into lines; the interner keeps pointers into it, so it must outlive the interner.
    mutating func lines(of text: UnsafeBufferPointer<UInt8>) -> Lines {
        let text = UnsafeRawBufferPointer(text)
        var ranges: [Range<Int>] = [], ids: [Int] = [], start = 0
        while start < text.count {
            let end = Self.lineEnd(in: text, from: start)
            ranges.append(start..<end)
            ids.append(id(of: UnsafeRawBufferPointer(rebasing: text[start..<end])))
            start = end
        }
        return Lines(text: text, ranges: ranges, ids: ids)
    }

    private mutating func id(of line: UnsafeRawBufferPointer) -> Int {
        if firstSeen.count * 2 >= slots.count { rebuild(slotCount: slots.count * 4) }
        let digest = Self.digest(line)
        var slot = Int(truncatingIfNeeded: digest) & (slots.count - 1)
        while slots[slot] >= 0 {
            let seen = firstSeen[slots[slot]]
            if seen.digest == digest, Self.sameBytes(seen.line, line) { return slots[slot] }
            slot = (slot + 1) & (slots.count - 1)
        }
        slots[slot] = firstSeen.count
        firstSeen.append((digest, line))
        return slots[slot]
    }

    private mutating func rebuild(slotCount: Int) {
        slots = [Int](repeating: -1, count: slotCount)
        for (id, seen) in firstSeen.enumerated() {
            var slot = Int(truncatingIfNeeded: seen.digest) & (slotCount - 1)
            while slots[slot] >= 0 { slot = (slot + 1) & (slotCount - 1) }
            slots[slot] = id
        }
    }

    private static func digest(_ line: UnsafeRawBufferPointer) -> UInt64 {
        var hash = 0x9E37_79B9_7F4A_7C15 ^ UInt64(line.count), offset = 0
        while offset + 8 <= line.count {
            hash = (hash ^ line.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
            hash ^= hash >> 31
            offset += 8
        }
        while offset < line.count { hash = (hash ^ UInt64(line[offset])) &* 0x94D0_49BB_1331_11EB; offset += 1 }
        return hash ^ (hash >> 29)
    }

    private static func sameBytes(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> Bool {
        guard lhs.count == rhs.count else { return false }
        var offset = 0
        while offset + 8 <= lhs.count {
            guard lhs.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                == rhs.loadUnaligned(fromByteOffset: offset, as: UInt64.self) else { return false }
            offset += 8
        }
        while offset < lhs.count, lhs[offset] == rhs[offset] { offset += 1 }
        return offset == lhs.count
    }

    /// Just past the next "\n" from `start`, or the text's end (the last line may lack one).
    ///
    /// Looks at eight bytes at a time: the lowest byte that the borrow trick flags is a true "\n".
    private static func lineEnd(in text: UnsafeRawBufferPointer, from start: Int) -> Int {
        var offset = start
        while offset + 8 <= text.count {
            let word = UInt64(littleEndian: text.loadUnaligned(fromByteOffset: offset, as: UInt64.self)) ^ 0x0A0A_0A0A_0A0A_0A0A
            let newlines = (word &- 0x0101_0101_0101_0101) & ~word & 0x8080_8080_8080_8080
            if newlines != 0 { return offset + newlines.trailingZeroBitCount / 8 + 1 }
            offset += 8
        }
        while offset < text.count {
            offset += 1
            if text[offset - 1] == UInt8(ascii: "\n") { return offset }
        }
        return text.count
    }
}
