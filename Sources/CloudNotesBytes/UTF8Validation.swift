import CBytes

// MARK: - Checking a line's UTF-8

/// Whether bytes are well-formed UTF-8, as Unicode defines it (table 3-7 of the standard): no overlong
/// forms, no surrogates, nothing above U+10FFFF, no sequence cut short.
///
/// Every request line is checked before it is parsed, and the standard library's check
/// (`String(validating:)`) was a large part of a keystroke in a long memo of Korean and English. Where
/// the processor has SSSE3, the check is `cbytes_utf8_check` (C, sixteen bytes a step: Keiser and
/// Lemire's algorithm); elsewhere it is a deterministic automaton whose transitions are packed into one
/// word per byte value (a "shift-based DFA"): a step is a table load and a shift, with no branch to
/// mispredict where Korean and spaces alternate, and runs of eight ASCII bytes are skipped a word at a
/// time.
package enum UTF8Validation {
    /// Whether `bytes` are well-formed UTF-8.
    package static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        switch cbytes_utf8_check(base, bytes.count) {
        case 1: return true
        case 0: return false
        default: return isValidByAutomaton(bytes)
        }
    }

    /// Whether `bytes` are well-formed UTF-8, by the automaton.
    static func isValidByAutomaton(_ bytes: UnsafeRawBufferPointer) -> Bool {
        transitions.withUnsafeBufferPointer { transitions in
            var state = State.start
            var index = 0
            while index + 8 <= bytes.count {
                let word = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                if word & 0x8080_8080_8080_8080 != 0 || state & State.mask != State.start {
                    for offset in index..<(index + 8) {
                        state = transitions[Int(bytes[offset])] &>> state
                    }
                }
                index += 8
            }
            for offset in index..<bytes.count {
                state = transitions[Int(bytes[offset])] &>> state
            }
            return state & State.mask == State.start
        }
    }

    // MARK: - The automaton

    /// The states, each the bit offset of its six-bit field in a transition word; a state's field in the
    /// word of the next byte holds the state to go to. Only the low six bits of a state count (`&>>`
    /// ignores the others), which saves masking on every step.
    enum State {
        /// Absorbing: every field at offset 0 is 0.
        static let invalid: UInt64 = 0
        /// Between characters, where the bytes must end.
        static let start: UInt64 = 6
        /// Inside a character, with one, two or three continuation bytes (80–BF) to come.
        static let needs1: UInt64 = 12
        static let needs2: UInt64 = 18
        static let needs3: UInt64 = 24
        /// After a lead byte whose next byte has a narrower range: E0 (A0–BF, no overlong form), ED
        /// (80–9F, no surrogate), F0 (90–BF, no overlong form), F4 (80–8F, nothing above U+10FFFF).
        static let afterE0: UInt64 = 30
        static let afterED: UInt64 = 36
        static let afterF0: UInt64 = 42
        static let afterF4: UInt64 = 48
        static let mask: UInt64 = 63
    }

    /// One word per byte value: for each state, the state that byte leads to.
    static let transitions: [UInt64] = {
        var words = [UInt64](repeating: 0, count: 256)
        func on(_ bytes: ClosedRange<UInt8>, from state: UInt64, to next: UInt64) {
            for byte in bytes { words[Int(byte)] |= next << state }
        }
        on(0x00...0x7F, from: State.start, to: State.start)
        on(0xC2...0xDF, from: State.start, to: State.needs1)
        on(0xE0...0xE0, from: State.start, to: State.afterE0)
        on(0xE1...0xEC, from: State.start, to: State.needs2)
        on(0xED...0xED, from: State.start, to: State.afterED)
        on(0xEE...0xEF, from: State.start, to: State.needs2)
        on(0xF0...0xF0, from: State.start, to: State.afterF0)
        on(0xF1...0xF3, from: State.start, to: State.needs3)
        on(0xF4...0xF4, from: State.start, to: State.afterF4)
        on(0x80...0xBF, from: State.needs1, to: State.start)
        on(0x80...0xBF, from: State.needs2, to: State.needs1)
        on(0x80...0xBF, from: State.needs3, to: State.needs2)
        on(0xA0...0xBF, from: State.afterE0, to: State.needs1)
        on(0x80...0x9F, from: State.afterED, to: State.needs1)
        on(0x90...0xBF, from: State.afterF0, to: State.needs2)
        on(0x80...0x8F, from: State.afterF4, to: State.needs2)
        return words
    }()
}
