import CBytes

// MARK: - JSON syntax check

/// A strict RFC 8259 syntax check of one line, without building any value and without recursion.
///
/// Foundation's decoder is lenient (it takes trailing commas and parses values lazily, so a bad value
/// deep in the params may pass unnoticed). This check runs first, so that every line that is not JSON
/// gets -32700, however deep or long it is.
package enum JSONSyntax {
    /// What a line is: a top-level object (with its members' places), another valid value, or why it is not JSON.
    package enum Verdict: Equatable {
        /// An object, with where each of its members is, so that a reader can take them without parsing
        /// the line again.
        case object([Member])
        case array, scalar
        case invalid(String)
        case tooDeep
    }

    /// Where one member of the top-level object is: byte offsets of its name (quotes included) and its value.
    package struct Member: Equatable {
        package var name: Range<Int>
        package var value: Range<Int>
    }

    /// Checks `bytes`; returns the kind of the top-level value, or what is wrong.
    package static func check(_ bytes: some Collection<UInt8>, maxDepth: Int) -> Verdict {
        // In place when the bytes are contiguous (a line read is): no copy of a long line.
        func run(_ buffer: UnsafeBufferPointer<UInt8>) -> Verdict {
            var scanner = Scanner(bytes: buffer, maxDepth: maxDepth)
            return scanner.run()
        }
        return bytes.withContiguousStorageIfAvailable(run) ?? Array(bytes).withUnsafeBufferPointer(run)
    }

    private struct Scanner {
        /// The line. A buffer pointer is not bounds-checked in release builds, and the line is the
        /// client's: every read below checks `position < bytes.count` first.
        let bytes: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        var position = 0
        /// The open containers, innermost last: true for an object.
        var stack: [Bool] = []
        /// The members of the top-level object, as far as scanned.
        var members: [Member] = []
        /// The name of the top-level member being scanned, and where its value starts.
        var memberName: Range<Int>?
        var memberValueStart: Int?

        init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        mutating func run() -> Verdict {
            skipSpace()
            guard position < bytes.count else { return .invalid("the line is empty") }
            let first = bytes[position]
            if let problem = value() { return problem }
            skipSpace()
            guard position == bytes.count else { return .invalid("unexpected text after the JSON value at byte \(position)") }
            switch first {
            case UInt8(ascii: "{"): return .object(members)
            case UInt8(ascii: "["): return .array
            default: return .scalar
            }
        }

        /// Scans one value, containers included, iteratively; nil when it is well formed.
        mutating func value() -> Verdict? {
            var expectingValue = true
            while true {
                if !expectingValue, stack.count == 1, let start = memberValueStart, let name = memberName {
                    members.append(Member(name: name, value: start..<position))
                    memberValueStart = nil
                }
                skipSpace()
                if expectingValue {
                    guard position < bytes.count else { return .invalid("the line ends inside a value") }
                    if stack.count == 1 { memberValueStart = position }
                    switch bytes[position] {
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        let isObject = bytes[position] == UInt8(ascii: "{")
                        stack.append(isObject)
                        if stack.count > maxDepth { return .tooDeep }
                        position += 1
                        skipSpace()
                        if position < bytes.count, bytes[position] == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                            position += 1
                            stack.removeLast()
                            expectingValue = false
                            if stack.isEmpty { return nil }
                            continue
                        }
                        if isObject, let problem = key() { return problem }
                        continue
                    case UInt8(ascii: "\""):
                        if let problem = string() { return problem }
                    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                        if let problem = number() { return problem }
                    case UInt8(ascii: "t"): if let problem = literal("true") { return problem }
                    case UInt8(ascii: "f"): if let problem = literal("false") { return problem }
                    case UInt8(ascii: "n"): if let problem = literal("null") { return problem }
                    default:
                        return .invalid("unexpected character at byte \(position)")
                    }
                    expectingValue = false
                    if stack.isEmpty { return nil }
                } else {
                    guard let isObject = stack.last else { return nil }
                    guard position < bytes.count else { return .invalid("the line ends inside a container") }
                    let byte = bytes[position]
                    position += 1
                    if byte == UInt8(ascii: ",") {
                        if isObject, let problem = key() { return problem }
                        expectingValue = true
                    } else if byte == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        stack.removeLast()
                        if stack.isEmpty { return nil }
                    } else {
                        return .invalid("expected ',' or a closing bracket at byte \(position - 1)")
                    }
                }
            }
        }

        /// Scans `"key" :` inside an object.
        mutating func key() -> Verdict? {
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
                return .invalid("expected a member name at byte \(position)")
            }
            let start = position
            if let problem = string() { return problem }
            if stack.count == 1 { memberName = start..<position }
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ":") else {
                return .invalid("expected ':' at byte \(position)")
            }
            position += 1
            return nil
        }

        mutating func string() -> Verdict? {
            position += 1  // the opening quote
            while position < bytes.count {
                // C's search itself, not `JSONStringBytes`: inlined here, as a call across modules is not.
                position = cbytes_first_special(bytes.baseAddress!, bytes.count, position)
                guard position < bytes.count else { break }
                let byte = bytes[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return nil
                case UInt8(ascii: "\\"):
                    guard position < bytes.count else { break }
                    let escape = bytes[position]
                    position += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard position + 4 <= bytes.count, bytes[position..<position + 4].allSatisfy(\.isHexDigit) else {
                            return .invalid("a \\u escape needs four hex digits (byte \(position))")
                        }
                        position += 4
                    default:
                        return .invalid("invalid escape at byte \(position - 1)")
                    }
                case 0..<0x20:
                    return .invalid("a string holds a raw control character at byte \(position - 1); escape it (\\n, \\u0000)")
                default:
                    continue
                }
            }
            return .invalid("the line ends inside a string")
        }

        mutating func number() -> Verdict? {
            let start = position
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard position < bytes.count, bytes[position].isDigit else { return .invalid("invalid number at byte \(start)") }
            if bytes[position] == UInt8(ascii: "0") {
                position += 1
                if position < bytes.count, bytes[position].isDigit { return .invalid("a number has a leading zero at byte \(start)") }
            } else {
                skipDigits()
            }
            if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
                position += 1
                guard position < bytes.count, bytes[position].isDigit else { return .invalid("invalid fraction at byte \(start)") }
                skipDigits()
            }
            if position < bytes.count, bytes[position] | 0x20 == UInt8(ascii: "e") {
                position += 1
                if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") { position += 1 }
                guard position < bytes.count, bytes[position].isDigit else { return .invalid("invalid exponent at byte \(start)") }
                skipDigits()
            }
            return nil
        }

        mutating func literal(_ word: StaticString) -> Verdict? {
            let count = word.utf8CodeUnitCount
            guard position + count <= bytes.count,
                  bytes[position..<position + count].elementsEqual(UnsafeBufferPointer(start: word.utf8Start, count: count))
            else { return .invalid("unexpected character at byte \(position)") }
            position += count
            return nil
        }

        mutating func skipDigits() {
            while position < bytes.count, bytes[position].isDigit { position += 1 }
        }

        mutating func skipSpace() {
            while position < bytes.count {
                switch bytes[position] {
                case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): position += 1
                default: return
                }
            }
        }
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
    fileprivate var isHexDigit: Bool { isDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self | 0x20) }
}
