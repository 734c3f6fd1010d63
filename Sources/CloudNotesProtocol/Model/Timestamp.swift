import Foundation

/// A point in time with millisecond precision, written as ISO 8601 in UTC (`2026-01-01T09:30:00.000Z`).
public struct Timestamp: Hashable, Sendable, Codable, Comparable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    private static let style = Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)

    public var iso8601: String { Self.style.format(date) }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let string = try container.decode(String.self)
        guard let date = try? Self.style.parse(string) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "is not an ISO 8601 timestamp")
        }
        milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(iso8601)
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }
}
