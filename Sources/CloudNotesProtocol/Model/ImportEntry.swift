// MARK: - Import entry

/// One memo in the original app's import format: `{"title", "body", "last_modified"}`.
///
/// Exports add `id` and `text`; an import that finds `text` uses it as the memo's exact text, so that an
/// export imports back byte for byte. Ids are never reused: each entry becomes a new memo.
public struct ImportEntry: Sendable, Hashable, Codable {
    public var title: String
    public var body: String
    /// Unix seconds.
    public var lastModified: Int64
    public var text: String?

    public init(title: String, body: String, lastModified: Int64, text: String? = nil) {
        self.title = title
        self.body = body
        self.lastModified = lastModified
        self.text = text
    }

    /// The memo text this entry stands for: `text` when given, else the title line and the body.
    public var memoText: String {
        if let text { return text }
        return body.isEmpty ? title : title + "\n" + body
    }

    /// The entry as JSON, with `id` when it comes from an export.
    public func json(id: MemoID? = nil) -> JSONValue {
        var members: [String: JSONValue] = [
            "title": .string(title), "body": .string(body), "last_modified": .number(Double(lastModified)),
        ]
        if let text { members["text"] = .string(text) }
        if let id { members["id"] = .string(id.description) }
        return .object(members)
    }

    public var json: JSONValue { json() }

    // MARK: Codable

    enum CodingKeys: String, CodingKey {
        case title, body, text, id
        case lastModified = "last_modified"
    }

    /// Decodes and validates one entry; an error is an `importInvalid` that names the entry's index.
    public init(from decoder: any Decoder) throws {
        let index = decoder.codingPath.last?.intValue
        func invalid(_ reason: String) -> ResponseError { .importInvalid(reason, index: index) }
        guard let container = try? decoder.container(keyedBy: CodingKeys.self) else {
            throw invalid("entry is not an object")
        }
        func string(_ key: CodingKeys) throws -> String {
            guard let value = try? container.decode(String.self, forKey: key) else {
                throw invalid("'\(key.stringValue)' must be a string")
            }
            return value
        }
        title = try string(.title)
        body = try string(.body)
        // Unix seconds; anything beyond year 9999 or before 1970 is a mistake, not a date.
        guard let seconds = try? container.decode(Int64.self, forKey: .lastModified), (0...253_402_300_799).contains(seconds) else {
            throw invalid("'last_modified' must be whole Unix seconds")
        }
        lastModified = seconds
        text = container.contains(.text) ? try string(.text) : nil
    }

    public func encode(to encoder: any Encoder) throws {
        try json.encode(to: encoder)
    }

    public static let schema = Schema.object([
        .required("title", .string()),
        .required("body", .string()),
        .required("last_modified", .integer(minimum: 0), "Unix seconds."),
        .optional("text", .string(), "The exact text; written by export, preferred by import."),
        .optional("id", .memoID, "Written by export; ignored by import."),
    ])
    public static let example = ImportEntry(title: "Shopping", body: "milk\neggs", lastModified: 1_608_651_333)
}
