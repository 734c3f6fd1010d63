import Foundation
import GRDB

// MARK: - ASCII queries, folded as the index folds them

/// How the trigram index folds the letters of an ASCII query, for the checks that read texts instead:
/// ASCII letters to lower case, and the only two characters outside ASCII that it folds into ASCII,
/// U+212A KELVIN SIGN to `k` and U+017F LONG S to `s` (SQLite 3.40; found by indexing every character).
/// `LIKE` and `lower()` fold ASCII alone, so a query that holds k or s takes a second look at the texts
/// that hold one of the two.
enum IndexFolding {
    static let kelvinSign: [UInt8] = Array("\u{212A}".utf8)
    static let longS: [UInt8] = Array("\u{017F}".utf8)

    /// Whether an ASCII query holds a letter that the index also folds a character outside ASCII into.
    static func needsSecondLook(_ query: String) -> Bool {
        query.utf8.contains { $0 | 0x20 == UInt8(ascii: "k") || $0 | 0x20 == UInt8(ascii: "s") }
    }

    /// Whether `text` holds a KELVIN SIGN or a LONG S and, folded as the index folds it, the ASCII
    /// `query`: what `LIKE` and `lower()` miss. False for every other text, which they read right.
    static func holdsThroughKelvinOrLongS(_ text: Data, _ query: Data) -> Bool {
        guard CaselessPattern.holds(text, kelvinSign) || CaselessPattern.holds(text, longS) else { return false }
        return CaselessPattern.holds(folded(text), Array(query.map(lowerCasedASCII)))
    }

    /// `text` with ASCII letters lower-cased and the two characters replaced by their letters. Byte by
    /// byte: in UTF-8 no character's bytes hold another's, nor an ASCII byte.
    static func folded(_ text: Data) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        text.withUnsafeBytes { bytes in
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte == kelvinSign[0], bytes[index...].starts(with: kelvinSign) {
                    result.append(UInt8(ascii: "k"))
                    index += kelvinSign.count
                } else if byte == longS[0], bytes[index...].starts(with: longS) {
                    result.append(UInt8(ascii: "s"))
                    index += longS.count
                } else {
                    result.append(lowerCasedASCII(byte))
                    index += 1
                }
            }
        }
        return result
    }

    private static func lowerCasedASCII(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// `cloudnotes_kelvin_long_s(text, query)`: `holdsThroughKelvinOrLongS`, for SQL.
    static let secondLook = DatabaseFunction("cloudnotes_kelvin_long_s", argumentCount: 2, pure: true) { values in
        guard let text = values[0].utf8Bytes, let query = values[1].utf8Bytes else { return false }
        return holdsThroughKelvinOrLongS(text, query)
    }
}

extension DatabaseValue {
    /// A text's or a blob's bytes; nil for anything else.
    var utf8Bytes: Data? {
        switch storage {
        case .blob(let data): data
        case .string(let string): Data(string.utf8)
        default: nil
        }
    }
}
