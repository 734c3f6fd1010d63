// MARK: - Schema

/// The shape of a JSON value, as the specification describes it.
///
/// Each message type states its own schema beside its Codable definition; a test encodes every
/// type's example and checks it against the schema, and another checks `protocol/protocol.schema.json`
/// against the schemas generated here, so that the code, the description and the spec cannot drift.
public indirect enum Schema: Sendable {
    case null
    case boolean
    case integer(minimum: Int64? = nil)
    case number
    case string(format: String? = nil)
    case enumeration([String])
    case array(Schema)
    case object([Field])
    /// A named type defined once in the description (`Memo`, `MemoRow`).
    case reference(String)
    case nullable(Schema)
    /// Any JSON value.
    case any
    /// Either of several shapes.
    case oneOf([Schema])

    /// A member of an object.
    public struct Field: Sendable {
        public var name: String
        public var schema: Schema
        public var isRequired: Bool
        public var summary: String

        public static func required(_ name: String, _ schema: Schema, _ summary: String = "") -> Field {
            Field(name: name, schema: schema, isRequired: true, summary: summary)
        }

        public static func optional(_ name: String, _ schema: Schema, _ summary: String = "") -> Field {
            Field(name: name, schema: schema, isRequired: false, summary: summary)
        }
    }
}

/// A type that says what it looks like on the wire and gives an example of itself.
public protocol SchemaDescribed {
    static var schema: Schema { get }
    static var example: Self { get }
}

extension SchemaDescribed where Self: Encodable {
    /// The example, as JSON.
    public static var exampleJSON: JSONValue { JSONValue(encoding: example) }
}

// MARK: - Shared shapes

extension Schema {
    public static let memoID = Schema.string(format: "uuid")
    public static let timestamp = Schema.string(format: "date-time")
    public static let index = Schema.integer(minimum: 0)
    public static let progressToken = Schema.oneOf([.integer(), .string()])
}

extension Memo {
    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("text", .string(), "The full text, byte for byte as sent."),
        .required("title", .string(), "First non-blank line, trimmed, or a localized placeholder."),
        .required("body", .string(), "Everything after the title line."),
        .required("createdAt", .timestamp),
        .required("modifiedAt", .timestamp),
        .required("version", .integer(minimum: 1), "Grows with every change."),
        .required("displayDate", .string(), "modifiedAt in the client's locale and time zone."),
    ])

    public static let example = Memo(
        id: MemoID("6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90")!, text: "Shopping\nmilk\neggs",
        title: "Shopping", body: "milk\neggs", createdAt: Timestamp(milliseconds: 1_767_225_600_000),
        modifiedAt: Timestamp(milliseconds: 1_767_225_600_000), version: 1,
        displayDate: "January 1, 2026 at 9:00 AM")
}

extension MemoRow {
    public static let schema = Schema.object([
        .required("id", .memoID),
        .required("title", .string()),
        .required("preview", .string(), "The body on one line, cut to about 100 characters."),
        .required("modifiedAt", .timestamp),
        .required("displayDate", .string()),
    ])

    public static let example = MemoRow(
        id: Memo.example.id, title: "Shopping", preview: "milk eggs",
        modifiedAt: Memo.example.modifiedAt, displayDate: Memo.example.displayDate)
}
