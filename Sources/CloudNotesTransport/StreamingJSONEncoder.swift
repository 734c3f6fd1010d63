// MARK: - Streaming JSON encoder

/// Encodes a Codable value straight into UTF-8 bytes, one pass, keys in the order the type encodes them.
///
/// Foundation's `JSONEncoder` first builds a tree of every value and then writes it; for the many small
/// messages of an editor session (and the hundred rows of a list page) that costs more than everything
/// else the server does. This encoder writes as it goes. It supports what Codable types do: keyed,
/// unkeyed and single-value containers, nested containers and super encoders. A container stays open
/// until its value's `encode(to:)` returns or, for a nested one, until its parent's next entry.
struct StreamingJSONEncoder {
    /// `value` as compact JSON.
    func encode(_ value: some Encodable) throws -> [UInt8] {
        let output = JSONOutput()
        output.bytes.reserveCapacity(256)
        try output.write(value, codingPath: [])
        return output.bytes
    }
}

/// The bytes written so far, and the containers still open.
final class JSONOutput {
    var bytes: [UInt8] = []
    /// The closing bracket of each open container, innermost last.
    private var closers: [UInt8] = []

    /// Writes one value: the containers it opens are closed when it returns.
    func write(_ value: some Encodable, codingPath: [any CodingKey]) throws {
        switch value {
        case let string as String: writeString(string)
        case let bool as Bool: append(bool ? "true" : "false")
        case let int as Int: append(String(int))
        case let int as Int64: append(String(int))
        case let double as Double: try writeDouble(double, codingPath: codingPath)
        default:
            let mark = closers.count
            let start = bytes.count
            try value.encode(to: ValueEncoder(output: self, codingPath: codingPath))
            close(downTo: mark)
            if bytes.count == start { append("{}") }  // a value that encoded nothing, as JSONEncoder does
        }
    }

    // MARK: Containers

    /// Opens a container; returns its place in the stack of open containers.
    func open(_ opening: UInt8, closing: UInt8) -> Int {
        bytes.append(opening)
        closers.append(closing)
        return closers.count - 1
    }

    private func close(downTo count: Int) {
        while closers.count > count {
            bytes.append(closers.removeLast())
        }
    }

    /// Starts a member or element of the container at `container`: closes the containers its previous
    /// entry left open (nested ones), then writes the separator.
    func beginEntry(of container: Int, isFirst: Bool) {
        close(downTo: container + 1)
        if !isFirst { bytes.append(UInt8(ascii: ",")) }
    }

    // MARK: Scalars

    func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    func writeDouble(_ double: Double, codingPath: [any CodingKey]) throws {
        guard double.isFinite else {
            throw EncodingError.invalidValue(double, .init(codingPath: codingPath, debugDescription: "JSON has no \(double)"))
        }
        if double.rounded() == double, abs(double) < 1e15 {
            append(String(Int64(double)))
        } else {
            append("\(double)")
        }
    }

    /// A JSON string: quotes, backslashes and control characters escaped, everything else as UTF-8.
    func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        string.withUTF8 { utf8 in
            var runStart = 0
            while true {
                let index = JSONStringBytes.firstSpecial(in: utf8, from: runStart)
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                guard index < utf8.count else { break }
                runStart = index + 1
                switch utf8[index] {
                case UInt8(ascii: "\""): append("\\\"")
                case UInt8(ascii: "\\"): append("\\\\")
                case UInt8(ascii: "\n"): append("\\n")
                case UInt8(ascii: "\r"): append("\\r")
                case UInt8(ascii: "\t"): append("\\t")
                case let byte:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

// MARK: - Encoder

private struct ValueEncoder: Encoder {
    let output: JSONOutput
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let index = output.open(UInt8(ascii: "{"), closing: UInt8(ascii: "}"))
        return KeyedEncodingContainer(KeyedContainer<Key>(output: output, codingPath: codingPath, index: index))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let index = output.open(UInt8(ascii: "["), closing: UInt8(ascii: "]"))
        return UnkeyedContainer(output: output, codingPath: codingPath, index: index)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(output: output, codingPath: codingPath)
    }
}

/// Counts the entries written, shared by copies of a container.
private final class EntryCount {
    var value = 0
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let output: JSONOutput
    let codingPath: [any CodingKey]
    /// This container's place in the output's stack of open containers.
    let index: Int
    let count = EntryCount()

    private func begin(_ key: Key) {
        output.beginEntry(of: index, isFirst: count.value == 0)
        count.value += 1
        output.writeString(key.stringValue)
        output.bytes.append(UInt8(ascii: ":"))
    }

    mutating func encodeNil(forKey key: Key) throws {
        begin(key)
        output.append("null")
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        begin(key)
        try output.write(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        begin(key)
        return ValueEncoder(output: output, codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        begin(key)
        return ValueEncoder(output: output, codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(forKey: Key(stringValue: "super")!)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        begin(key)
        return ValueEncoder(output: output, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let output: JSONOutput
    let codingPath: [any CodingKey]
    let index: Int
    let entries = EntryCount()
    var count: Int { entries.value }

    private func begin() {
        output.beginEntry(of: index, isFirst: entries.value == 0)
        entries.value += 1
    }

    mutating func encodeNil() throws {
        begin()
        output.append("null")
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        begin()
        try output.write(value, codingPath: codingPath)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        begin()
        return ValueEncoder(output: output, codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        begin()
        return ValueEncoder(output: output, codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        begin()
        return ValueEncoder(output: output, codingPath: codingPath)
    }
}

private struct SingleValueContainer: SingleValueEncodingContainer {
    let output: JSONOutput
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { output.append("null") }
    mutating func encode(_ value: Bool) throws { output.append(value ? "true" : "false") }
    mutating func encode(_ value: String) throws { output.writeString(value) }
    mutating func encode(_ value: Double) throws { try output.writeDouble(value, codingPath: codingPath) }
    mutating func encode(_ value: Float) throws { try output.writeDouble(Double(value), codingPath: codingPath) }
    mutating func encode(_ value: Int) throws { output.append(String(value)) }
    mutating func encode(_ value: Int8) throws { output.append(String(value)) }
    mutating func encode(_ value: Int16) throws { output.append(String(value)) }
    mutating func encode(_ value: Int32) throws { output.append(String(value)) }
    mutating func encode(_ value: Int64) throws { output.append(String(value)) }
    mutating func encode(_ value: UInt) throws { output.append(String(value)) }
    mutating func encode(_ value: UInt8) throws { output.append(String(value)) }
    mutating func encode(_ value: UInt16) throws { output.append(String(value)) }
    mutating func encode(_ value: UInt32) throws { output.append(String(value)) }
    mutating func encode(_ value: UInt64) throws { output.append(String(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try output.write(value, codingPath: codingPath) }
}
