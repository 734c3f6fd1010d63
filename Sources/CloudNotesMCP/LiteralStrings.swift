import CloudNotesJSON
import Foundation
import MCP

// MARK: - Strings carried past the SDK unchanged

/// Strings of results that the SDK would change on their way out, carried past it.
///
/// The SDK passes every result through its `Value` (`TypedRequestHandler`), which reads a string that
/// reads as a data URL (`data:,Hello`) as bytes and writes it back base64-encoded: a memo whose text
/// or title is a data URL would reach the client changed. So such a string enters a result behind a
/// marker, U+FDD1 (a noncharacter), which `restore` takes out of the message as the transport writes
/// it. A string that begins with the marker gets one more, so that no string loses one it had.
enum LiteralStrings {
    private static let marker = Character(Unicode.Scalar(0xFDD1)!)
    private static let markerBytes = Array(String(marker).utf8)

    /// `string` as a result carries it.
    static func protect(_ string: String) -> String {
        string.first == marker || Data.isDataURL(string: string) ? String(marker) + string : string
    }

    /// Every string in `value`, protected.
    static func protect(_ value: Value) -> Value {
        switch value {
        case .string(let string): .string(protect(string))
        case .array(let values): .array(values.map(protect))
        case .object(let members): .object(members.mapValues(protect))
        default: value
        }
    }

    /// The encoded message with the marker taken from the start of each string that has one.
    static func restore(_ message: Data) -> Data {
        guard message.firstRange(of: markerBytes) != nil else { return message }
        return message.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            var restored = Data(capacity: bytes.count)
            var copied = 0  // the bytes before this one are in `restored`
            var scan = 0
            var inString = false
            // From quote to quote: a backslash (only ever inside a string) escapes the byte after it.
            while case let found = JSONStringBytes.firstSpecial(in: bytes, from: scan), found < bytes.count {
                switch bytes[found] {
                case UInt8(ascii: "\\"):
                    scan = found + 2
                case UInt8(ascii: "\""):
                    scan = found + 1
                    inString.toggle()
                    if inString, UnsafeBufferPointer(rebasing: bytes[scan...]).starts(with: markerBytes) {
                        restored.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied..<scan]))
                        scan += markerBytes.count
                        copied = scan
                    }
                default:
                    scan = found + 1  // white space between members
                }
            }
            restored.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[copied...]))
            return restored
        }
    }
}
