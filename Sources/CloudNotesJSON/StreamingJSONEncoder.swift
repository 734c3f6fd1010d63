import CBytes
import Foundation

// MARK: - Streaming JSON encoder

/// Encodes a Codable value straight into UTF-8 bytes, one pass, keys in the order the type encodes them.
///
/// Foundation's `JSONEncoder` first builds a tree of every value and then writes it; for the many small
/// messages of an editor session (and the hundred rows of a list page) that costs more than everything
/// else the server does. This encoder writes as it goes. It supports what Codable types do: keyed,
/// unkeyed and single-value containers, nested containers and super encoders. A container stays open
/// until its value's `encode(to:)` returns or, for a nested one, until its parent's next entry.
package struct StreamingJSONEncoder {
    package init() {}

    /// `value` as compact JSON.
    package func encode(_ value: some Encodable) throws -> [UInt8] {
        let output = JSONOutput()
        output.bytes.reserveCapacity(256)
        try output.write(value, at: .root)
        return output.bytes
    }
}

/// A value that writes its own JSON into the output, member by member, instead of through `Encodable`'s
/// containers: the types nearly every message carries (ids, timestamps, memos and list rows).
///
/// Through `Encodable`, a list row costs a keyed container (a boxed existential) and a generic call per
/// member, more than the row's bytes; a list page is a hundred rows. `writeJSON` must write exactly what
/// `encode(to:)` encodes, compactly, keys in the same order (a test holds each type to it byte for byte).
package protocol JSONWritable: Encodable {
    func writeJSON(to output: JSONOutput)
}

/// The bytes written so far, and the containers still open.
///
/// Its properties are exempt from run-time exclusivity checks: each access to a class's stored property
/// is otherwise checked, once per byte appended, about a quarter of the time spent encoding a list page. One
/// encoder writes on one thread, and every access is a short append that calls nothing back.
package final class JSONOutput {
    @exclusivity(unchecked) var bytes: [UInt8] = []
    /// Each open container, innermost last: its closing bracket and how many entries it has.
    @exclusivity(unchecked) private var open: [(closer: UInt8, entries: Int)] = []

    /// Writes one value: the containers it opens are closed when it returns.
    func write<T: Encodable>(_ value: T, at position: CodingPosition) throws {
        // Comparing types is cheap; a cast that fails, tried for every value, is not.
        if T.self == String.self {
            writeString(value as! String)
        } else if T.self == Int.self {
            writeInteger(value as! Int)
        } else if T.self == Int64.self {
            writeInteger(value as! Int64)
        } else if T.self == Bool.self {
            append((value as! Bool) ? "true" : "false")
        } else if T.self == Double.self {
            try writeDouble(value as! Double, at: position)
        } else if let writable = value as? any JSONWritable {
            writable.writeJSON(to: self)
        } else {
            let mark = open.count
            let start = bytes.count
            try value.encode(to: ValueEncoder(output: self, position: position))
            close(downTo: mark)
            if bytes.count == start { append("{}") }  // a value that encoded nothing, as JSONEncoder does
        }
    }

    /// A string member of an object that a `JSONWritable` writes: `opening` is what comes before its
    /// value (the separator or brace, and its key).
    package func writeMember(_ opening: StaticString, _ value: String) {
        append(opening)
        writeString(value)
    }

    // MARK: Containers

    /// Opens a container; returns its place in the stack of open containers.
    func open(_ opening: UInt8, closing: UInt8) -> Int {
        bytes.append(opening)
        open.append((closing, 0))
        return open.count - 1
    }

    private func close(downTo count: Int) {
        while open.count > count {
            bytes.append(open.removeLast().closer)
        }
    }

    /// Starts a member or element of the container at `container`: closes the containers its previous
    /// entry left open (nested ones), then writes the separator.
    func beginEntry(of container: Int) {
        close(downTo: container + 1)
        guard container < open.count else { return }  // written after its container closed: as JSONEncoder, no separator to add
        if open[container].entries > 0 { bytes.append(UInt8(ascii: ",")) }
        open[container].entries += 1
    }

    /// The entries written so far into the container at `container`.
    func entries(of container: Int) -> Int {
        container < open.count ? open[container].entries : 0
    }

    // MARK: Scalars

    package func append(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Digit by digit into the output (a version, an index, a total: almost every message has one),
    /// instead of through a string.
    package func writeInteger(_ integer: some BinaryInteger) {
        if integer < 0 { bytes.append(UInt8(ascii: "-")) }
        var rest = integer.magnitude
        let start = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(rest % 10))
            rest /= 10
        } while rest > 0
        // Through the buffer: an array slice reversed in place would copy the whole output first.
        bytes.withUnsafeMutableBufferPointer { $0[start...].reverse() }
    }

    func writeDouble(_ double: Double, at position: CodingPosition) throws {
        guard double.isFinite else {
            throw EncodingError.invalidValue(double, .init(codingPath: position.codingPath, debugDescription: "JSON has no \(double)"))
        }
        if double.rounded() == double, abs(double) < 1e15 {
            writeInteger(Int64(double))
        } else {
            bytes.append(contentsOf: "\(double)".utf8)
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    package func writeString(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            writeEscaped(utf8, from: 0, to: utf8.count)
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// Writes `string` as `writeString` does; when it ends with `suffix` (not empty), returns where the
    /// suffix's escaped bytes lie in the output, between the quotes.
    package func writeString(_ string: String, endingWith suffix: String) -> Range<Int>? {
        var string = string
        var suffix = suffix
        return string.withUTF8 { utf8 in
            let suffixStart = suffix.withUTF8 { end -> Int? in
                guard !end.isEmpty, end.count <= utf8.count,
                      memcmp(utf8.baseAddress! + (utf8.count - end.count), end.baseAddress!, end.count) == 0
                else { return nil }
                return utf8.count - end.count
            }
            let split = suffixStart ?? utf8.count
            bytes.append(UInt8(ascii: "\""))
            defer { bytes.append(UInt8(ascii: "\"")) }
            writeEscaped(utf8, from: 0, to: split)
            let escapedSplit = bytes.count
            writeEscaped(utf8, from: split, to: utf8.count)
            return suffixStart.map { _ in escapedSplit..<bytes.count }
        }
    }

    /// Appends `utf8[start..<end]` escaped.
    private func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int) {
        let text = UnsafeBufferPointer(rebasing: utf8[..<end])
        var read = start
        while read < end {
            // A memo's escapes (a newline a line) add a few percent: the output grows at most once for it.
            let left = end - read
            reserve(left + left / 8 + 6)
            bytes.append(addingCapacity: bytes.capacity - bytes.count) { output in
                output.withUnsafeMutableBufferPointer { room, written in
                    read = Self.escape(text, from: read, into: room, written: &written)
                }
            }
        }
    }

    /// A string whose escaped bytes the output already holds at `escaped`: quoted, a copy of them.
    package func writeCopy(of escaped: Range<Int>) {
        reserve(escaped.count + 2)
        bytes.append(UInt8(ascii: "\""))
        let start = bytes.count
        // Room first, then the copy within the one buffer: appending a slice of `bytes` to itself would
        // copy the whole output, as the slice keeps the buffer shared.
        bytes.append(contentsOf: repeatElement(0, count: escaped.count))
        bytes.withUnsafeMutableBufferPointer { output in
            (output.baseAddress! + start).update(from: output.baseAddress! + escaped.lowerBound, count: escaped.count)
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Copies `text[start...]` escaped into `room` after its first `written` bytes, until the text or the
    /// room runs out; returns how far the text was read.
    ///
    /// Straight into the output's spare capacity: appending run by run costs about ninety instructions
    /// a run, and a memo has a run a line.
    private static func escape(
        _ text: UnsafeBufferPointer<UInt8>, from start: Int, into room: UnsafeMutableBufferPointer<UInt8>, written: inout Int
    ) -> Int {
        guard let output = room.baseAddress, let input = text.baseAddress else { return start }
        var read = start
        while read < text.count {
            // C's search itself, not `JSONStringBytes`: inlined here, as a call across modules is not,
            // and a long text pays that call at every run.
            let special = cbytes_first_special(input, text.count, read)
            let run = min(special - read, room.count - written)
            (output + written).update(from: input + read, count: run)
            written += run
            read += run
            guard read == special, special < text.count, room.count - written >= 6 else { return read }
            let byte = text[special]
            read += 1
            output[written] = UInt8(ascii: "\\")
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): output[written + 1] = byte
            case UInt8(ascii: "\n"): output[written + 1] = UInt8(ascii: "n")
            case UInt8(ascii: "\r"): output[written + 1] = UInt8(ascii: "r")
            case UInt8(ascii: "\t"): output[written + 1] = UInt8(ascii: "t")
            default:
                let hex: StaticString = "0123456789abcdef"
                output[written + 1] = UInt8(ascii: "u")
                output[written + 2] = UInt8(ascii: "0")
                output[written + 3] = UInt8(ascii: "0")
                output[written + 4] = hex.utf8Start[Int(byte >> 4)]
                output[written + 5] = hex.utf8Start[Int(byte & 0xF)]
                written += 4
            }
            written += 2
        }
        return read
    }

    /// Makes room for `count` more bytes, at least doubling the room, so that a long text is not
    /// copied into a new buffer again and again as its runs are appended.
    private func reserve(_ count: Int) {
        let needed = bytes.count + count
        if bytes.capacity < needed { bytes.reserveCapacity(max(needed, bytes.capacity * 2)) }
    }
}

// MARK: - Coding paths

/// Where a value is written, for the coding path of an error. Encoding never needs the path, so it is
/// put together only when asked for: no array is built per key.
struct CodingPosition {
    /// The path of the container holding the value.
    let container: CodingPathNode?
    /// The value's key in that container (an `IndexKey` in an unkeyed one); nil for the root.
    let key: (any CodingKey)?

    static var root: CodingPosition { CodingPosition(container: nil, key: nil) }

    var codingPath: [any CodingKey] {
        (container?.codingPath ?? []) + (key.map { [$0] } ?? [])
    }

    /// The path of a container opened at this position.
    var node: CodingPathNode? {
        key.map { CodingPathNode(parent: container, key: $0) } ?? container
    }
}

/// One key of a coding path, linked to the path of its container.
final class CodingPathNode {
    let parent: CodingPathNode?
    let key: any CodingKey

    init(parent: CodingPathNode?, key: any CodingKey) {
        self.parent = parent
        self.key = key
    }

    var codingPath: [any CodingKey] {
        (parent?.codingPath ?? []) + [key]
    }
}

// MARK: - Encoder

private struct ValueEncoder: Encoder {
    let output: JSONOutput
    let position: CodingPosition
    var codingPath: [any CodingKey] { position.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let index = output.open(UInt8(ascii: "{"), closing: UInt8(ascii: "}"))
        return KeyedEncodingContainer(KeyedContainer<Key>(output: output, path: position.node, index: index))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let index = output.open(UInt8(ascii: "["), closing: UInt8(ascii: "]"))
        return UnkeyedContainer(output: output, path: position.node, index: index)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(output: output, position: position)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let output: JSONOutput
    let path: CodingPathNode?
    /// This container's place in the output's stack of open containers.
    let index: Int
    var codingPath: [any CodingKey] { path?.codingPath ?? [] }

    private func begin(_ key: Key) {
        output.beginEntry(of: index)
        output.writeString(key.stringValue)
        output.bytes.append(UInt8(ascii: ":"))
    }

    mutating func encodeNil(forKey key: Key) throws {
        begin(key)
        output.append("null")
    }

    mutating func encode(_ value: String, forKey key: Key) throws {
        begin(key)
        output.writeString(value)
    }

    mutating func encode(_ value: Bool, forKey key: Key) throws {
        begin(key)
        output.append(value ? "true" : "false")
    }

    mutating func encode(_ value: Int, forKey key: Key) throws {
        begin(key)
        output.writeInteger(value)
    }

    mutating func encode(_ value: Int64, forKey key: Key) throws {
        begin(key)
        output.writeInteger(value)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        begin(key)
        try output.write(value, at: CodingPosition(container: path, key: key))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        begin(key)
        return encoder(for: key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        begin(key)
        return encoder(for: key).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(forKey: Key(stringValue: "super")!)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        begin(key)
        return encoder(for: key)
    }

    private func encoder(for key: Key) -> ValueEncoder {
        ValueEncoder(output: output, position: CodingPosition(container: path, key: key))
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let output: JSONOutput
    let path: CodingPathNode?
    let index: Int
    var codingPath: [any CodingKey] { path?.codingPath ?? [] }
    var count: Int { output.entries(of: index) }

    /// The encoder of the element just begun (`beginEntry` has counted it).
    private var element: ValueEncoder {
        ValueEncoder(output: output, position: CodingPosition(container: path, key: IndexKey(index: count - 1)))
    }

    mutating func encodeNil() throws {
        output.beginEntry(of: index)
        output.append("null")
    }

    mutating func encode(_ value: String) throws {
        output.beginEntry(of: index)
        output.writeString(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        output.beginEntry(of: index)
        try output.write(value, at: element.position)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        output.beginEntry(of: index)
        return element.container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        output.beginEntry(of: index)
        return element.unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        output.beginEntry(of: index)
        return element
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let output: JSONOutput
    let position: CodingPosition
    var codingPath: [any CodingKey] { position.codingPath }

    mutating func encodeNil() throws { output.append("null") }
    mutating func encode(_ value: Bool) throws { output.append(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { output.writeString(value) }
    mutating func encode(_ value: Double) throws { try output.writeDouble(value, at: position) }
    mutating func encode(_ value: Float) throws { try output.writeDouble(Double(value), at: position) }
    mutating func encode(_ value: Int) throws { output.writeInteger(value) }
    mutating func encode(_ value: Int8) throws { output.writeInteger(value) }
    mutating func encode(_ value: Int16) throws { output.writeInteger(value) }
    mutating func encode(_ value: Int32) throws { output.writeInteger(value) }
    mutating func encode(_ value: Int64) throws { output.writeInteger(value) }
    mutating func encode(_ value: UInt) throws { output.writeInteger(value) }
    mutating func encode(_ value: UInt8) throws { output.writeInteger(value) }
    mutating func encode(_ value: UInt16) throws { output.writeInteger(value) }
    mutating func encode(_ value: UInt32) throws { output.writeInteger(value) }
    mutating func encode(_ value: UInt64) throws { output.writeInteger(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { try output.write(value, at: position) }
}
