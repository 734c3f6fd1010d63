// MARK: - The elements of a JSON array, as it is read

/// Splits a JSON array into its elements' bytes as the array is read, a chunk at a time, so that an
/// array of any size takes the memory of a chunk and an element (an import file of 100,000 memos).
///
/// An element ends at the bracket that closes it, outside strings; a string at its closing quote; a
/// number or a literal at the next separator or space. Only the array's own syntax is checked here;
/// each element is checked when it is decoded.
package struct JSONArrayReader {
    /// What is wrong with the array's own syntax.
    package enum Problem: Error, Equatable {
        /// The first value is not an array.
        case notAnArray
        /// After element `index`, something other than `,` or `]`.
        case noSeparator(after: Int)
        /// The bytes end inside the array, between elements.
        case endsInsideArray
        /// The bytes end inside element `index`.
        case endsInsideElement(Int)
        /// More than white space after the closing bracket.
        case textAfterArray
    }

    /// Appends the next bytes of the array to its argument; false at the end.
    package typealias Source = (inout [UInt8]) throws -> Bool

    private let source: Source
    /// Bytes read but not consumed yet.
    private var buffer: [UInt8] = []
    private var position = 0
    private var atEnd = false
    private var sawOpening = false
    private var finished = false
    /// How many elements were handed out.
    package private(set) var elementsRead = 0

    package init(source: @escaping Source) {
        self.source = source
    }

    /// Calls `body` with the next element's bytes; nil after the closing bracket.
    package mutating func next<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) throws -> R? {
        guard let element = try nextElement() else { return nil }
        elementsRead += 1
        return try buffer.withUnsafeBufferPointer { try body(UnsafeBufferPointer(rebasing: $0[element])) }
    }

    /// Where the next element lies in `buffer` (valid until the next read), or nil after the closing bracket.
    private mutating func nextElement() throws -> Range<Int>? {
        guard !finished else { return nil }
        if !sawOpening {
            guard try nextSignificantByte() == UInt8(ascii: "[") else { throw Problem.notAnArray }
            position += 1
            sawOpening = true
            if try nextSignificantByte() == UInt8(ascii: "]") { return try close() }
        } else {
            switch try nextSignificantByte() {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"): return try close()
            default: throw Problem.noSeparator(after: elementsRead - 1)
            }
        }
        guard try nextSignificantByte() != nil else { throw Problem.endsInsideArray }
        return try elementRange()
    }

    private mutating func close() throws -> Range<Int>? {
        position += 1
        finished = true
        if try nextSignificantByte() != nil { throw Problem.textAfterArray }
        return nil
    }

    /// Finds the end of the value at `position` (its first byte is there), reading more as needed, and
    /// moves past it.
    private mutating func elementRange() throws -> Range<Int> {
        var scanner = ElementScanner(first: buffer[position])
        var scan = position
        while true {
            let from = scan
            if let end = buffer.withUnsafeBufferPointer({ scanner.end(in: $0, from: from) }) {
                defer { position = end }
                return position..<end
            }
            let scanned = buffer.count - position
            guard try readMore() else {
                guard scanner.isScalar else { throw Problem.endsInsideElement(elementsRead) }
                defer { position = buffer.count }
                return position..<buffer.count
            }
            scan = position + scanned
        }
    }

    /// The next byte that is not white space, reading more as needed; nil at the end.
    private mutating func nextSignificantByte() throws -> UInt8? {
        while true {
            while position < buffer.count {
                guard isJSONSpace(buffer[position]) else { return buffer[position] }
                position += 1
            }
            guard try readMore() else { return nil }
        }
    }

    /// Appends the next bytes, dropping what was consumed; false at the end.
    private mutating func readMore() throws -> Bool {
        guard !atEnd else { return false }
        buffer.removeFirst(position)
        position = 0
        if try !source(&buffer) { atEnd = true }
        return !atEnd
    }
}

// MARK: - Where an element ends

/// Finds where one element ends, across reads: the scan's state between them.
///
/// Inside a string, the scan jumps from one byte that matters there (`"`, `\`, a control byte) to the
/// next, sixteen bytes a step (`JSONStringBytes.firstSpecial`): the texts are most of an import file.
private struct ElementScanner {
    private let isContainer: Bool
    private let isString: Bool
    private var depth = 0
    private var inString = false
    private var escaped = false

    /// For the element whose first byte is `first`.
    init(first: UInt8) {
        isContainer = first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
        isString = first == UInt8(ascii: "\"")
    }

    /// A number or a literal: it ends where the bytes do, if nothing ends it before.
    var isScalar: Bool { !isContainer && !isString }

    /// The index just past the element's end, scanning `bytes` from `start` (the element's first byte, or
    /// where the last call stopped), or nil when the bytes end first.
    mutating func end(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        var scan = start
        if isScalar {
            while scan < bytes.count {
                let byte = bytes[scan]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]") || isJSONSpace(byte) { return scan }
                scan += 1
            }
            return nil
        }
        while scan < bytes.count {
            if inString, !escaped {
                scan = JSONStringBytes.firstSpecial(in: bytes, from: scan)
                if scan == bytes.count { return nil }
            }
            let byte = bytes[scan]
            scan += 1
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                    if isString { return scan }
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 { return scan }
            default: break
            }
        }
        return nil
    }
}

/// Whether `byte` is white space between JSON values (RFC 8259: space, tab, line feed, carriage return).
private func isJSONSpace(_ byte: UInt8) -> Bool {
    byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\t")
}
