import Foundation

// MARK: - Decoding

/// Decodes JSON text into a Decodable value: a well-formed value through `JSONTree` and
/// `JSONTreeDecoder`, and what they leave (every mistake among them) through Foundation's
/// `JSONDecoder`, whose error says what is wrong.
///
/// The tree copies the runs between escapes in bulk, at a fraction of what Foundation's decoder costs
/// a memo's text; the tree decoder gives up wherever Foundation must decide, so the two agree.
package enum JSONDecoding {
    /// `json` decoded as `T`. With `knownValidUTF8`, the caller checked the bytes' UTF-8, and strings
    /// are made without checking it again.
    package static func decode<T: Decodable>(_ type: T.Type, from json: UnsafeBufferPointer<UInt8>,
                                             knownValidUTF8: Bool = false) throws -> T {
        if let decoded = decodedFromTree(type, json, knownValidUTF8: knownValidUTF8) { return decoded }
        return try JSONDecoder().decode(type, from: Data(buffer: json))
    }

    /// `json` decoded as `T` (see `decode(_:from:knownValidUTF8:)`).
    package static func decode<T: Decodable>(_ type: T.Type, from json: Data, knownValidUTF8: Bool = false) throws -> T {
        if let decoded = decodedFromTree(type, json, knownValidUTF8: knownValidUTF8) { return decoded }
        return try JSONDecoder().decode(type, from: json)
    }

    /// `json` decoded through the tree, or nil when Foundation's decoder must decide.
    package static func decodedFromTree<T: Decodable>(_ type: T.Type, _ json: Data, knownValidUTF8: Bool = false) -> T? {
        json.withUnsafeBytes { raw in
            decodedFromTree(type, raw.assumingMemoryBound(to: UInt8.self), knownValidUTF8: knownValidUTF8)
        }
    }

    private static func decodedFromTree<T: Decodable>(_ type: T.Type, _ json: UnsafeBufferPointer<UInt8>,
                                                      knownValidUTF8: Bool) -> T? {
        JSONTree.parse(json, knownValidUTF8: knownValidUTF8).flatMap { JSONTreeDecoder.decode(type, from: $0) }
    }
}
