import Foundation

/// The stable identity of a memo: a UUID, written in lower case on the wire and in the store.
public struct MemoID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    public let uuid: UUID

    public init(_ uuid: UUID = UUID()) { self.uuid = uuid }

    /// Parses a UUID in any case; nil when `string` is not a UUID.
    public init?(_ string: String) {
        guard let uuid = UUID(uuidString: string) else { return nil }
        self.uuid = uuid
    }

    public var description: String { uuid.uuidString.lowercased() }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let id = MemoID(string) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "is not a UUID")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    public static func < (lhs: MemoID, rhs: MemoID) -> Bool { lhs.description < rhs.description }
}
