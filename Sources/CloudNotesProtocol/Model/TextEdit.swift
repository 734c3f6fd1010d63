// MARK: - Text edit

/// One change to a memo's text, as an editor reports it: the UTF-8 bytes `start..<end` become `text`.
///
/// Offsets count UTF-8 bytes because that is how the text is stored: finding an offset costs nothing
/// however long the memo, and an editor that counts bytes (Neovim's `on_bytes`) sends what it is given.
/// An offset inside a code point's bytes is refused, so a memo never holds broken UTF-8.
public struct TextEdit: Codable, Sendable, Hashable, SchemaDescribed {
    /// The first byte replaced.
    public var start: Int
    /// The byte after the last one replaced; equal to `start` for an insertion.
    public var end: Int
    /// What replaces them; empty for a deletion.
    public var text: String

    public init(start: Int, end: Int, text: String) {
        self.start = start
        self.end = end
        self.text = text
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        func offset(_ key: CodingKeys) throws -> Int {
            guard let value = try container.decodeWholeNumberIfPresent(Int.self, forKey: key, minimum: 0) else {
                throw DecodingError.keyNotFound(key, .init(codingPath: container.codingPath, debugDescription: "is missing"))
            }
            return value
        }
        start = try offset(.start)
        end = try offset(.end)
        text = try container.decode(String.self, forKey: .text)
    }

    public static let schema = Schema.object([
        .required("start", .integer(minimum: 0), "The first UTF-8 byte replaced."),
        .required("end", .integer(minimum: 0), "The UTF-8 byte after the last one replaced; `start` for an insertion."),
        .required("text", .string(), "What replaces the bytes; empty for a deletion."),
    ])
    public static let example = TextEdit(start: 18, end: 18, text: "\nbread")

    /// The most edits one `memo/edit` may carry.
    public static let maxCount = 1000
}

// MARK: - Applying edits

extension TextEdit {
    /// `text` with `edits` applied in order, each to the text the edits before it left (as an editor
    /// reports a burst of changes).
    ///
    /// Throws an invalid-params error naming the edit at fault (`edits[2]`) when its range is not in that
    /// text or cuts a code point's bytes, and one naming `edits` when there are more than `maxCount` of
    /// them or the result is over `maxBytes`.
    public static func apply(_ edits: [TextEdit], to text: String, maxBytes: Int) throws(ResponseError) -> String {
        // Each edit copies the text once: a bound on their number bounds a request's work (a long memo).
        guard edits.count <= maxCount else {
            throw .invalidParams(param: "edits", "holds \(edits.count) edits, more than the \(maxCount) one request may carry")
        }
        var text = text
        for (index, edit) in edits.enumerated() {
            let param = "edits[\(index)]"
            let utf8 = text.utf8
            guard edit.start <= edit.end, edit.end <= utf8.count else {
                throw .invalidParams(
                    param: param, "replaces bytes \(edit.start)..<\(edit.end), which are not in the \(utf8.count)-byte text")
            }
            let start = utf8.index(utf8.startIndex, offsetBy: edit.start)
            let end = utf8.index(start, offsetBy: edit.end - edit.start)
            guard utf8.isScalarBoundary(start), utf8.isScalarBoundary(end) else {
                throw .invalidParams(param: param, "starts or ends inside the UTF-8 bytes of one code point")
            }
            // Pieces of valid strings joined at code point boundaries: copied, never validated again,
            // which matters for a long memo and one keystroke.
            var edited = String()
            edited.reserveCapacity(utf8.count - (edit.end - edit.start) + edit.text.utf8.count)
            edited.append(contentsOf: text[..<start])
            edited.append(edit.text)
            edited.append(contentsOf: text[end...])
            text = edited
        }
        guard text.utf8.count <= maxBytes else {
            throw .invalidParams(param: "edits", "would make the text longer than the \(maxBytes)-byte limit of a memo")
        }
        return text
    }
}

extension String.UTF8View {
    /// Whether `index` falls between two code points' UTF-8 bytes (or at the end), not inside one.
    fileprivate func isScalarBoundary(_ index: Index) -> Bool {
        index == endIndex || self[index] & 0b1100_0000 != 0b1000_0000
    }
}
