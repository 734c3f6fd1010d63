import Foundation

/// The stable identity of a memo: a UUID, written in lower case on the wire and in the store.
///
/// Kept as its canonical string: ids are read from the store and written to the client far more often
/// than they are made, and Foundation's `UUID` parses and prints through `sscanf` and `sprintf`.
public struct MemoID: Hashable, Sendable, WireString, CustomStringConvertible, Comparable {
    /// The UUID in lower case, such as `6f1c2a8e-3b7d-4f0a-9c55-2d8e1f4b7a90`.
    public let description: String

    /// A new, random id.
    public init() {
        description = UUID().uuidString.lowercased()
    }

    /// Parses a UUID in any case; nil when `string` is not a UUID.
    ///
    /// An id already in lower case (every id the store holds) is kept as it is, without a copy: each
    /// row of a list page goes through here.
    public init?(_ string: String) {
        var string = string
        // Nil when `string` is not a UUID, else whether it has upper-case letters.
        let hasUpperCase: Bool? = string.withUTF8 { utf8 in
            guard utf8.count == 36 else { return nil }
            var found = false
            for index in 0..<36 {
                let byte = utf8[index]
                switch index {
                case 8, 13, 18, 23:
                    guard byte == UInt8(ascii: "-") else { return nil }
                default:
                    switch byte {
                    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): break
                    case UInt8(ascii: "A")...UInt8(ascii: "F"): found = true
                    default: return nil
                    }
                }
            }
            return found
        }
        guard let hasUpperCase else { return nil }
        description = hasUpperCase ? string.lowercased() : string
    }

    public var wireString: String { description }
    public static func parse(wireString string: String) -> MemoID? { MemoID(string) }
    public static let wireDescription = "a UUID"

    public static func < (lhs: MemoID, rhs: MemoID) -> Bool { lhs.description < rhs.description }
}
