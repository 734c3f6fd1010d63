import Foundation

// MARK: - A pretty-printed JSON array, an element at a time

/// Writes a JSON array element by element, byte for byte as `JSONEncoder` with `.prettyPrinted` writes
/// the whole array: each element on lines of its own, indented by two spaces, the elements separated by
/// commas.
///
/// The export writes its file this way, a batch of memos at a time, where encoding the whole array
/// would hold every memo in memory twice over.
package struct PrettyJSONArray {
    /// The encoder of one element: the export's format, keys sorted.
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()
    package static let opening = Array("[\n".utf8)
    /// `JSONEncoder` writes an empty array as "[\n\n]", so the closing is the same with or without elements.
    package static let closing = Array("\n]".utf8)

    /// How many elements were appended.
    package private(set) var count = 0

    package init() {}

    /// Appends `value` to `output` as the array's next element.
    package mutating func append(_ value: some Encodable, to output: inout [UInt8]) throws {
        let element = try encoder.encode(value)
        let indent = Array("  ".utf8)
        if count > 0 { output += Array(",\n".utf8) }
        output += indent
        // A JSON string holds no raw line feed, so each one ends a line of the element's layout.
        element.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) -> Void in
            guard let base = bytes.baseAddress else { return }
            var start = 0
            while start < bytes.count {
                var end = bytes.count
                if let lineFeed = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) {
                    end = UnsafeRawPointer(lineFeed) - base + 1
                }
                output.append(contentsOf: bytes[start..<end])
                if bytes[end - 1] == UInt8(ascii: "\n") { output += indent }
                start = end
            }
        }
        count += 1
    }
}
