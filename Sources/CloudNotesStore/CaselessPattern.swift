import Foundation
import Synchronization

// MARK: - Searching texts without case, beyond ASCII

/// A query to look for in texts, ignoring case as `String.lowercased()` does: each character's full
/// lower-case mapping (Swift applies no context, so a final Σ is σ). What `cloudnotes_contains` runs
/// for every memo a search reads with a query whose letters have case beyond ASCII.
///
/// Lower-casing every text read took 29 s for a one-letter query at 100,000 memos, so a text is
/// lower-cased only when it holds an *anchor*: a character whose lower case holds one chosen character
/// of the query. A text without one cannot hold the query lower-cased, and the anchors are looked for
/// with `memchr` in the text's bytes as they are.
struct CaselessPattern: Sendable {
    /// The query lower-cased, as UTF-8.
    let lowercasedQuery: [UInt8]
    /// The UTF-8 of each anchor; nil when every text must be lower-cased (see `init`).
    let anchors: [[UInt8]]?

    init(_ query: String) {
        let lowercased = query.lowercased()
        lowercasedQuery = Array(lowercased.utf8)
        // U+FFFD also stands for bytes that are not UTF-8, which the text's bytes do not hold as it.
        guard !lowercased.unicodeScalars.contains("\u{FFFD}"),
              let chosen = lowercased.unicodeScalars.min(by: { Self.isBetterAnchor($0, than: $1) })
        else {
            anchors = nil
            return
        }
        anchors = Self.charactersLowercasing(to: chosen).map { Array(String($0).utf8) }
    }

    /// Whether `text` (UTF-8) lower-cased holds the query lower-cased.
    func isFound(in text: Data) -> Bool {
        if let anchors, !anchors.contains(where: { Self.holds(text, $0) }) { return false }
        return Self.holds(Self.lowerCased(text), lowercasedQuery)
    }

    // MARK: Anchors

    /// The characters whose lower case holds `scalar`: itself unless it changes, and every character
    /// that lower-cases into it.
    static func charactersLowercasing(to scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        (scalar.properties.changesWhenLowercased ? [] : [scalar]) + (lowerCasePreimages[scalar] ?? [])
    }

    /// Outside ASCII first (rarer in a text), then the fewest anchors.
    private static func isBetterAnchor(_ a: Unicode.Scalar, than b: Unicode.Scalar) -> Bool {
        if a.isASCII != b.isASCII { return !a.isASCII }
        return charactersLowercasing(to: a).count < charactersLowercasing(to: b).count
    }

    /// For each character, the characters that change when lower-cased and whose lower case holds it
    /// (1,488 change in Swift 6.3, all below U+20000; every character is asked, once a process).
    private static let lowerCasePreimages: [Unicode.Scalar: [Unicode.Scalar]] = {
        var preimages: [Unicode.Scalar: [Unicode.Scalar]] = [:]
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), scalar.properties.changesWhenLowercased else { continue }
            for image in Set(scalar.properties.lowercaseMapping.unicodeScalars) {
                preimages[image, default: []].append(scalar)
            }
        }
        return preimages
    }()

    // MARK: Bytes

    /// `text` lower-cased as `String.lowercased()` does it, without building a string per character
    /// for the characters that do not change (ASCII, Korean, Chinese: most of a memo).
    static func lowerCased(_ text: Data) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        for scalar in String(decoding: text, as: UTF8.self).unicodeScalars {
            if scalar.isASCII {
                let byte = UInt8(scalar.value)
                result.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
            } else if scalar.properties.changesWhenLowercased {
                result.append(contentsOf: scalar.properties.lowercaseMapping.utf8)
            } else {
                result.append(contentsOf: UTF8.encode(scalar)!)
            }
        }
        return result
    }

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
