// MARK: - Import entry

/// One memo in the original app's import format: `{"title", "body", "last_modified"}`.
///
/// Exports add `id` and `text`; an import that finds `text` uses it as the memo's exact text, so that an
/// export imports back byte for byte. Ids are never reused: each entry becomes a new memo.
public struct ImportEntry: Sendable, Hashable {
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

    /// Reads the entry at `index` of an import; the error names the index and the field at fault.
    public init(json value: JSONValue, index: Int) throws(ResponseError) {
        guard case .object(let members) = value else {
            throw .importInvalid("entry is not an object", index: index)
        }
        func string(_ key: String) throws(ResponseError) -> String {
            guard case .string(let string)? = members[key] else {
                throw .importInvalid("'\(key)' must be a string", index: index)
            }
            return string
        }
        title = try string("title")
        body = try string("body")
        // Unix seconds; anything beyond year 9999 or before 1970 is a mistake, not a date.
        guard case .number(let seconds)? = members["last_modified"], seconds.rounded() == seconds,
              seconds >= 0, seconds <= 253_402_300_799
        else {
            throw .importInvalid("'last_modified' must be whole Unix seconds", index: index)
        }
        lastModified = Int64(seconds)
        if let textValue = members["text"] {
            guard case .string(let exact) = textValue else {
                throw .importInvalid("'text' must be a string", index: index)
            }
            text = exact
        }
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

    public static let schema = Schema.object([
        .required("title", .string()),
        .required("body", .string()),
        .required("last_modified", .integer(minimum: 0), "Unix seconds."),
        .optional("text", .string(), "The exact text; written by export, preferred by import."),
        .optional("id", .memoID, "Written by export; ignored by import."),
    ])
    public static let example = ImportEntry(title: "Shopping", body: "milk\neggs", lastModified: 1_608_651_333)
}
