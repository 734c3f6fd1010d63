import Foundation

// MARK: - Derived parts of a memo's text

/// The title, body and preview a memo's text stands for.
///
/// The text is the only thing stored as the user wrote it; everything here is derived from it, so that
/// no client can make a title disagree with its text.
public struct MemoText: Sendable, Hashable {
    /// The first line with non-blank characters, trimmed; empty when there is none.
    public let title: String
    /// Everything after the title line, as written.
    public var body: String { String(bodyText) }
    /// The body, not copied out of the text: an edit of a long memo needs only its title and preview.
    private let bodyText: Substring

    public static let previewLength = 100
    public static let listTitleLength = 200

    /// The title as a list row shows it: cut to `listTitleLength` characters.
    public var listTitle: String {
        // Every character takes a byte at least, so a title of no more bytes than that needs no cut, and
        // no walk through its grapheme clusters, 2-3% of the server's time in pipelined keystrokes.
        guard title.utf8.count > Self.listTitleLength else { return title }
        let cut = title.prefix(Self.listTitleLength)
        return cut.endIndex == title.endIndex ? title : cut + "…"
    }

    public init(_ text: String) {
        // Lines end at the byte \n: a Character view would see "\r\n" as one character and miss it.
        var rest = Substring(text)
        while !rest.isEmpty {
            let utf8 = rest.utf8
            let lineEnd = rest.firstLineEnd ?? utf8.endIndex
            let line = rest[rest.startIndex..<lineEnd]
            rest = lineEnd == utf8.endIndex ? rest[lineEnd...] : rest[utf8.index(after: lineEnd)...]
            let trimmed = line.trimmingBlanks()
            if !trimmed.isEmpty {
                title = String(trimmed)
                bodyText = rest
                return
            }
        }
        title = ""
        bodyText = ""
    }

    /// The body on one line: runs of white space (newlines included) become one space, cut to about 100 characters.
    public var preview: String {
        Self.simplePreview(of: bodyText) ?? Self.characterPreview(of: bodyText)
    }

    /// The whole body on one line: runs of white space (newlines included) become one space, nothing
    /// cut. What the shell prints in a pipe, where `grep` should see every word.
    public var bodyOnOneLine: String {
        var line = PreviewBuilder(limit: nil)
        for character in bodyText {
            _ = line.take(character.utf8, isWhitespace: character.isWhitespace)
        }
        return line.result
    }

    // MARK: - Preview

    /// The preview, walking characters (grapheme clusters): right for any text, but it pays for
    /// grapheme breaking at every step, a large part of the cost of importing or of a keystroke.
    static func characterPreview(of body: Substring) -> String {
        var preview = PreviewBuilder()
        for character in body {
            guard preview.take(character.utf8, isWhitespace: character.isWhitespace) else { break }
        }
        return preview.result
    }

    /// The preview, walking the UTF-8 bytes a scalar at a time; nil when it meets a scalar that could
    /// join its neighbour into one character, for `characterPreview` to take over.
    ///
    /// Every scalar below U+0300 (where combining marks start), every precomposed Hangul syllable and
    /// every CJK ideograph of the basic block is a character of its own, whatever surrounds it (the
    /// one exception, "\r\n", is white space either way), so over such text a scalar walk gives the
    /// character walk's result exactly. White space among those scalars is the ASCII kind, U+0085 and U+00A0.
    static func simplePreview(of body: Substring) -> String? {
        let walked = body.utf8.withContiguousStorageIfAvailable { bytes -> String? in
            var preview = PreviewBuilder()
            var index = 0
            while index < bytes.count {
                let lead = bytes[index]
                let length: Int
                let isWhitespace: Bool
                switch lead {
                case ..<0x80:
                    length = 1
                    isWhitespace = lead == 0x20 || (0x09...0x0D).contains(lead)
                case 0xC0..<0xE0:
                    let value = UInt32(lead & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)
                    guard value < 0x300 else { return nil }
                    length = 2
                    isWhitespace = value == 0x85 || value == 0xA0
                case 0xE0..<0xF0:
                    let value = UInt32(lead & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
                    guard (0xAC00...0xD7A3).contains(value) || (0x4E00...0x9FFF).contains(value) else { return nil }
                    length = 3
                    isWhitespace = false
                default:
                    return nil
                }
                guard preview.take(bytes[index..<index + length], isWhitespace: isWhitespace) else { break }
                index += length
            }
            return preview.result
        }
        return walked ?? nil
    }
}

/// Builds a preview a character at a time: white space runs become one space, at most `limit`
/// characters, then "…".
private struct PreviewBuilder {
    private var bytes: [UInt8] = []
    private var pendingSpace = false
    private var count = 0
    private let limit: Int

    /// A builder that cuts at `limit` characters (nil: never).
    init(limit: Int? = MemoText.previewLength) {
        self.limit = limit ?? .max
        if limit != nil { bytes.reserveCapacity(4 * (MemoText.previewLength + 2)) }
    }

    var result: String { String(decoding: bytes, as: UTF8.self) }

    /// Adds a character, given as its UTF-8 bytes; false once the preview is full (the "…" added).
    mutating func take(_ character: some Collection<UInt8>, isWhitespace: Bool) -> Bool {
        if isWhitespace {
            pendingSpace = !bytes.isEmpty
            return true
        }
        if pendingSpace {
            bytes.append(UInt8(ascii: " "))
            count += 1
            pendingSpace = false
        }
        if count >= limit {
            bytes.append(contentsOf: "…".utf8)
            return false
        }
        // A byte at a time: for one to three bytes, `append(contentsOf:)` took about 80 instructions a
        // call, a tenth of an import's reading thread (callgrind).
        for byte in character { bytes.append(byte) }
        count += 1
        return true
    }
}

extension Substring {
    /// The line without leading and trailing white space (a trailing `\r` included).
    ///
    /// Works on Unicode scalars: grapheme breaking over a multi-megabyte line costs seconds.
    func trimmingBlanks() -> Substring {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return Substring(scalars[first...last])
    }
}

extension String {
    /// Whether the text has no character but white space: a blank memo, which the split view discards.
    public var isBlank: Bool { allSatisfy(\.isWhitespace) }
}

extension Substring {
    /// Where the first line ends: the index of the first byte \n, found with `memchr`. The generic
    /// `utf8.firstIndex(of:)` stepped through the UTF-8 view's indices a byte at a time, at every
    /// keystroke over the whole first line (a memo written as one long paragraph).
    var firstLineEnd: Index? {
        var bytes = self
        let offset = bytes.withUTF8 { buffer -> Int? in
            guard let base = buffer.baseAddress, let found = memchr(base, Int32(UInt8(ascii: "\n")), buffer.count) else { return nil }
            return UnsafeRawPointer(base).distance(to: found)
        }
        return offset.map { utf8.index(utf8.startIndex, offsetBy: $0) }
    }
}
