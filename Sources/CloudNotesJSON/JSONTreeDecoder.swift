import Foundation

// MARK: - Decoding a tree

/// Decodes a `JSONTree` into a Decodable type as Foundation's `JSONDecoder` (default strategies) would
/// decode the same text, or gives up, and the caller asks Foundation.
///
/// It takes only the way every well-formed request goes: whenever Foundation would fail (a missing
/// member, a wrong type) it fails too, without a message of its own, since it is Foundation that
/// then says precisely what is wrong. Whatever it is not sure to do exactly as Foundation (numbers
/// with fractions or exponents, `Float`, `Date`, `Data`, `URL`, `Decimal`, super decoders) makes it
/// give up, and its result is thrown away even when the type caught the error and went on (as
/// `JSONValue` does, trying one type after another).
package enum JSONTreeDecoder {
    /// `T` decoded from `tree`, or nil when Foundation's decoder must decide.
    package static func decode<T: Decodable>(_ type: T.Type, from tree: JSONTree) -> T? {
        let attempt = Attempt()
        guard let value = try? T(from: TreeDecoder(value: tree, codingPath: [], attempt: attempt)), !attempt.gaveUp else {
            return nil
        }
        return value
    }
}

/// One decoding, on one thread: whether it met something it leaves to Foundation.
private final class Attempt {
    var gaveUp = false

    /// Records that Foundation must decide; the error only unwinds the decoding.
    func giveUp() -> Refusal {
        gaveUp = true
        return Refusal()
    }
}

/// A failure where Foundation would fail too, or a give-up: either way, never shown to anyone.
private struct Refusal: Error {}

// MARK: - Values

/// Decodes `value` as `T`, the types Foundation's decoder treats as scalars first.
private func decodeValue<T: Decodable>(
    _ type: T.Type, _ value: JSONTree, codingPath: [any CodingKey], attempt: Attempt
) throws -> T {
    if T.self == String.self {
        guard case .string(let string) = value else { throw Refusal() }
        return string as! T
    }
    if T.self == Bool.self {
        guard case .bool(let bool) = value else { throw Refusal() }
        return bool as! T
    }
    if T.self == Double.self {
        switch value {
        case .integer(let integer): return Double(integer) as! T  // exact: at most 15 digits
        case .otherNumber: throw attempt.giveUp()
        default: throw Refusal()
        }
    }
    if let integerType = T.self as? any FixedWidthInteger.Type {
        switch value {
        case .integer(let integer):
            guard let converted = exactly(integer, as: integerType) else { throw Refusal() }  // out of range
            return converted as! T
        case .otherNumber: throw attempt.giveUp()
        default: throw Refusal()
        }
    }
    if T.self == Float.self || T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self {
        throw attempt.giveUp()  // types Foundation's decoder reads its own way
    }
    return try T(from: TreeDecoder(value: value, codingPath: codingPath, attempt: attempt))
}

private func exactly<Integer: FixedWidthInteger>(_ value: Int64, as type: Integer.Type) -> Integer? {
    Integer(exactly: value)
}

extension JSONTree {
    var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

// MARK: - Decoder

private struct TreeDecoder: Decoder {
    let value: JSONTree
    let codingPath: [any CodingKey]
    let attempt: Attempt
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw Refusal() }
        return KeyedDecodingContainer(KeyedTreeContainer(members: members, codingPath: codingPath, attempt: attempt))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw Refusal() }
        return UnkeyedTreeContainer(elements: elements, codingPath: codingPath, attempt: attempt)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleTreeContainer(value: value, codingPath: codingPath, attempt: attempt)
    }
}

// MARK: - Containers

private struct KeyedTreeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: [String: JSONTree]
    let codingPath: [any CodingKey]
    let attempt: Attempt

    var allKeys: [Key] { members.keys.compactMap(Key.init(stringValue:)) }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func decodeNil(forKey key: Key) throws -> Bool { try member(key).isNull }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try decodeValue(type, try member(key), codingPath: codingPath + [key], attempt: attempt)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { throw attempt.giveUp() }
    func superDecoder(forKey key: Key) throws -> any Decoder { throw attempt.giveUp() }

    private func member(_ key: Key) throws -> JSONTree {
        guard let value = members[key.stringValue] else { throw Refusal() }  // Foundation: keyNotFound
        return value
    }

    private func decoder(_ key: Key) throws -> TreeDecoder {
        TreeDecoder(value: try member(key), codingPath: codingPath + [key], attempt: attempt)
    }
}

private struct UnkeyedTreeContainer: UnkeyedDecodingContainer {
    let elements: [JSONTree]
    let codingPath: [any CodingKey]
    let attempt: Attempt
    private(set) var currentIndex = 0

    init(elements: [JSONTree], codingPath: [any CodingKey], attempt: Attempt) {
        self.elements = elements
        self.codingPath = codingPath
        self.attempt = attempt
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { throw Refusal() }
        guard elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let decoded = try decodeValue(type, try current(), codingPath: codingPath + [IndexKey(index: currentIndex)], attempt: attempt)
        currentIndex += 1
        return decoded
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let container = try decoder().container(keyedBy: type)
        currentIndex += 1
        return container
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let container = try decoder().unkeyedContainer()
        currentIndex += 1
        return container
    }

    mutating func superDecoder() throws -> any Decoder { throw attempt.giveUp() }

    private func current() throws -> JSONTree {
        guard !isAtEnd else { throw Refusal() }  // Foundation: valueNotFound
        return elements[currentIndex]
    }

    private func decoder() throws -> TreeDecoder {
        TreeDecoder(value: try current(), codingPath: codingPath + [IndexKey(index: currentIndex)], attempt: attempt)
    }
}

private struct SingleTreeContainer: SingleValueDecodingContainer {
    let value: JSONTree
    let codingPath: [any CodingKey]
    let attempt: Attempt

    func decodeNil() -> Bool { value.isNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(type, value, codingPath: codingPath, attempt: attempt)
    }
}
