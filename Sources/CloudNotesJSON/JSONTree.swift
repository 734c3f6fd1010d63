// MARK: - Params as a tree

/// A JSON value as `JSONTreeDecoder` decodes it: the params of a request, parsed once.
///
/// Foundation's `JSONDecoder` builds a string that holds an escape piece by piece, checking each
/// piece's UTF-8 as it appends it: about fifty instructions a byte for a memo's text, whose every line
/// ends in `\n`. `JSONTree.parse` copies the runs between escapes in bulk and checks the string's
/// UTF-8 once, which makes decoding a long memo's `memo/update` several times cheaper.
package indirect enum JSONTree {
    /// Members by name; an object that names a member twice is left to Foundation.
    case object([String: JSONTree])
    case array([JSONTree])
    case string(String)
    /// A whole number written without a fraction or an exponent, of at most 15 digits (so that it is
    /// also exactly a `Double`), other than `-0`.
    case integer(Int64)
    /// Any other number. Decoding one is left to Foundation, whose rules for rounding, range and `-0`
    /// this parser does not repeat.
    case otherNumber
    case bool(Bool)
    case null

    /// The tree of `bytes`, or nil when they hold anything this parser leaves to Foundation: text that
    /// is not JSON or not UTF-8, an unpaired surrogate escape, a member named twice, nesting deeper than
    /// `maxDepth`.
    ///
    /// With `knownValidUTF8` (the bytes are a slice of a line `MessageDecoder` checked), strings are made
    /// without checking their UTF-8 again: undoing escapes keeps valid UTF-8 valid, since an escape
    /// stands between whole characters and never makes a lone surrogate.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>, knownValidUTF8: Bool = false) -> JSONTree? {
        var parser = Parser(bytes: bytes, knownValidUTF8: knownValidUTF8)
        guard let tree = parser.value(depth: 0) else { return nil }
        parser.skipSpace()
        return parser.position == bytes.count ? tree : nil
    }

    /// Deeper than the protocol's nesting limit (64), so never met by a message the reader accepted.
    static let maxDepth = 128
}

// MARK: - Parser

/// A strict recursive-descent parser. Every read checks `position < bytes.count` first: the bytes are
/// the client's, and a buffer pointer is not bounds-checked in release builds.
private struct Parser {
    let bytes: UnsafeBufferPointer<UInt8>
    let knownValidUTF8: Bool
    var position = 0
    /// A string's bytes once its escapes are undone; kept between strings to reuse its memory.
    var unescaped: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, knownValidUTF8: Bool) {
        self.bytes = bytes
        self.knownValidUTF8 = knownValidUTF8
    }

    mutating func value(depth: Int) -> JSONTree? {
        skipSpace()
        guard position < bytes.count, depth < JSONTree.maxDepth else { return nil }
        switch bytes[position] {
        case UInt8(ascii: "{"): return object(depth: depth)
        case UInt8(ascii: "["): return array(depth: depth)
        case UInt8(ascii: "\""): return string().map(JSONTree.string)
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        default: return number()
        }
    }

    private mutating func object(depth: Int) -> JSONTree? {
        position += 1  // {
        var members: [String: JSONTree] = [:]
        skipSpace()
        if take(UInt8(ascii: "}")) { return .object(members) }
        repeat {
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\""), let name = string() else { return nil }
            skipSpace()
            guard take(UInt8(ascii: ":")), let member = value(depth: depth + 1) else { return nil }
            guard members.updateValue(member, forKey: name) == nil else { return nil }
            skipSpace()
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? .object(members) : nil
    }

    private mutating func array(depth: Int) -> JSONTree? {
        position += 1  // [
        var elements: [JSONTree] = []
        skipSpace()
        if take(UInt8(ascii: "]")) { return .array(elements) }
        repeat {
            guard let element = value(depth: depth + 1) else { return nil }
            elements.append(element)
            skipSpace()
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]")) ? .array(elements) : nil
    }

    private mutating func literal(_ word: StaticString, _ tree: JSONTree) -> JSONTree? {
        let count = word.utf8CodeUnitCount
        guard bytes.count - position >= count,
              UnsafeBufferPointer(rebasing: bytes[position..<position + count]).elementsEqual(
                  UnsafeBufferPointer(start: word.utf8Start, count: count))
        else { return nil }
        position += count
        return tree
    }

    // MARK: Numbers

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, as RFC 8259 writes numbers.
    private mutating func number() -> JSONTree? {
        let negative = take(UInt8(ascii: "-"))
        let integerStart = position
        guard position < bytes.count else { return nil }
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else if !takeDigits() {
            return nil
        }
        let integerEnd = position
        var whole = true
        if take(UInt8(ascii: ".")) {
            guard takeDigits() else { return nil }
            whole = false
        }
        if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
            if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
            guard takeDigits() else { return nil }
            whole = false
        }
        let digits = integerEnd - integerStart
        guard whole, digits <= 15, !(negative && bytes[integerStart] == UInt8(ascii: "0")) else { return .otherNumber }
        var magnitude: Int64 = 0
        for index in integerStart..<integerEnd {
            magnitude = magnitude * 10 + Int64(bytes[index] &- UInt8(ascii: "0"))
        }
        return .integer(negative ? -magnitude : magnitude)
    }

    /// Takes one or more digits; false when there is none.
    private mutating func takeDigits() -> Bool {
        let start = position
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            position += 1
        }
        return position > start
    }

    // MARK: Strings

    /// The string that starts at `position` (its opening quote), its escapes undone.
    private mutating func string() -> String? {
        position += 1  // "
        let start = position
        let special = JSONStringBytes.firstSpecial(in: bytes, from: position)
        // Most strings hold no escape: made straight from the line, checked once.
        if special < bytes.count, bytes[special] == UInt8(ascii: "\"") {
            position = special + 1
            return makeString(UnsafeBufferPointer(rebasing: bytes[start..<special]))
        }
        // Undone straight into the buffer's spare room, which the rest of the params always outsize: an
        // escape is never shorter than what it stands for (appending run by run costs about two hundred
        // instructions a run, and a memo's text has a run a line).
        var buffer: [UInt8] = []
        swap(&buffer, &unescaped)
        defer { swap(&buffer, &unescaped) }
        buffer.removeAll(keepingCapacity: true)
        var closed = false
        buffer.append(addingCapacity: bytes.count - start) { output in
            output.withUnsafeMutableBufferPointer { room, written in
                closed = undoEscapes(firstSpecial: special, into: room.baseAddress!, written: &written)
            }
        }
        guard closed else { return nil }
        return buffer.withUnsafeBufferPointer(makeString)
    }

    /// Copies the string from `position` to its closing quote into `output`, escapes undone; false at a
    /// mistake. `special` is the first quote, backslash or control character from `position`.
    private mutating func undoEscapes(firstSpecial: Int, into output: UnsafeMutablePointer<UInt8>, written: inout Int) -> Bool {
        var special = firstSpecial
        while special < bytes.count {
            (output + written).update(from: bytes.baseAddress! + position, count: special - position)
            written += special - position
            position = special + 1
            switch bytes[special] {
            case UInt8(ascii: "\""):
                return true
            case UInt8(ascii: "\\"):
                guard unescape(into: output, written: &written) else { return false }
            default:
                return false  // a control character, which JSON allows only escaped
            }
            special = JSONStringBytes.firstSpecial(in: bytes, from: position)
        }
        return false  // no closing quote
    }

    /// A string of `utf8`, checked unless the line was.
    private func makeString(_ utf8: UnsafeBufferPointer<UInt8>) -> String? {
        knownValidUTF8 ? String(copying: UTF8Span(unchecked: utf8.span)) : String(validating: utf8, as: UTF8.self)
    }

    /// Undoes the escape after a backslash, writing its bytes to `output` at `written`.
    private mutating func unescape(into output: UnsafeMutablePointer<UInt8>, written: inout Int) -> Bool {
        guard position < bytes.count else { return false }
        let letter = bytes[position]
        position += 1
        let byte: UInt8
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte = letter
        case UInt8(ascii: "b"): byte = 0x08
        case UInt8(ascii: "f"): byte = 0x0C
        case UInt8(ascii: "n"): byte = 0x0A
        case UInt8(ascii: "r"): byte = 0x0D
        case UInt8(ascii: "t"): byte = 0x09
        case UInt8(ascii: "u"):
            guard let unit = hexUnit() else { return false }
            var scalar = UInt32(unit)
            if (0xD800..<0xDC00).contains(unit) {
                // A high surrogate must be followed by an escaped low one; an unpaired one is left to Foundation.
                guard take(UInt8(ascii: "\\")), take(UInt8(ascii: "u")), let low = hexUnit(), (0xDC00..<0xE000).contains(low)
                else { return false }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if (0xDC00..<0xE000).contains(unit) {
                return false
            }
            guard let character = Unicode.Scalar(scalar) else { return false }
            for unit in UTF8.encode(character)! {
                output[written] = unit
                written += 1
            }
            return true
        default:
            return false
        }
        output[written] = byte
        written += 1
        return true
    }

    /// Four hex digits, as a UTF-16 code unit.
    private mutating func hexUnit() -> UInt16? {
        guard bytes.count - position >= 4 else { return nil }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            unit = unit << 4 | UInt16(digit)
            position += 1
        }
        return unit
    }

    // MARK: Helpers

    mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): position += 1
            default: return
            }
        }
    }

    /// Takes `byte` when it is next.
    private mutating func take(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }
}
