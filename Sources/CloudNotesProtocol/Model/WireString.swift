// MARK: - Values written as one string

/// A value that is one string on the wire (an id, a timestamp): its `Codable` conformance reads and
/// writes `wireString`.
public protocol WireString: Codable {
    /// The string on the wire.
    var wireString: String { get }
    /// The value `string` spells on the wire; nil when it spells none.
    static func parse(wireString string: String) -> Self?
    /// What the string on the wire should be, for the error when it spells no value ("a UUID").
    static var wireDescription: String { get }
}

extension WireString {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        guard let value = Self.parse(wireString: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "is not \(Self.wireDescription)")
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wireString)
    }
}
