import Foundation
import Synchronization

// MARK: - Searching texts without case, beyond ASCII

/// A query to look for in texts, ignoring case as the index does (`IndexFolding`): what
/// `cloudnotes_contains` runs for every memo a search reads with a query whose letters have case
/// beyond ASCII, or that holds NUL.
///
/// Lower-casing every text read made a one-letter query take seconds in a large store, so a text is
/// folded only when it holds an *anchor*: a character that folds to one chosen character of the
/// query. A text without one cannot hold the query folded, and the anchors are looked for with
/// `memchr` in the text's bytes as they are.
struct CaselessPattern: Sendable {
    /// The query folded, as UTF-8.
    let foldedQuery: [UInt8]
    /// The UTF-8 of each anchor; nil when every text must be folded (see `init`).
    let anchors: [[UInt8]]?

    init(_ query: String) {
        let folded = IndexFolding.fold(query)
        foldedQuery = Array(folded.utf8)
        // U+FFFD also stands for bytes that are not UTF-8, which the text's bytes do not hold as it.
        guard !folded.unicodeScalars.contains("\u{FFFD}"),
              let chosen = folded.unicodeScalars.min(by: { Self.isBetterAnchor($0, than: $1) })
        else {
            anchors = nil
            return
        }
        anchors = IndexFolding.charactersFolding(to: chosen).map { Array(String($0).utf8) }
    }

    /// Whether `text` (UTF-8) folded holds the query folded.
    func isFound(in text: Data) -> Bool {
        if let anchors, !anchors.contains(where: { Self.holds(text, $0) }) { return false }
        return Self.holds(IndexFolding.folded(text), foldedQuery)
    }

    /// Outside ASCII first (rarer in a text), then the fewest anchors.
    private static func isBetterAnchor(_ a: Unicode.Scalar, than b: Unicode.Scalar) -> Bool {
        if a.isASCII != b.isASCII { return !a.isASCII }
        return IndexFolding.charactersFolding(to: a).count < IndexFolding.charactersFolding(to: b).count
    }

    // MARK: Bytes

    /// Whether `haystack` holds `needle`: `memchr` for its first byte, then `memcmp` (`firstRange(of:)`
    /// compares a byte at a time; Glibc's `memmem` is out of Swift's reach).
    static func holds(_ haystack: some ContiguousBytes, _ needle: [UInt8]) -> Bool {
        haystack.withUnsafeBytes { hay in
            needle.withUnsafeBytes { pin in
                guard let first = pin.first else { return true }
                var rest = hay
                while rest.count >= pin.count {
                    guard let found = memchr(rest.baseAddress!, Int32(first), rest.count - pin.count + 1) else { return false }
                    if memcmp(found, pin.baseAddress!, pin.count) == 0 { return true }
                    rest = UnsafeRawBufferPointer(rebasing: rest[(rest.baseAddress!.distance(to: found) + 1)...])
                }
                return false
            }
        }
    }

    // MARK: The SQL function

    /// The pattern of the query last asked for: a search asks the same query of every memo it reads.
    private static let last = Mutex<(query: Data, pattern: CaselessPattern)?>(nil)

    /// The pattern for `query` (UTF-8), built once for a run of calls with the same query.
    static func pattern(for query: Data) -> CaselessPattern {
        if let cached = last.withLock({ $0 }), cached.query == query { return cached.pattern }
        let pattern = CaselessPattern(String(decoding: query, as: UTF8.self))
        last.withLock { $0 = (query, pattern) }
        return pattern
    }
}
