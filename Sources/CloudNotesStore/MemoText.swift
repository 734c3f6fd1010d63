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
        let cut = title.prefix(Self.listTitleLength)
        return cut.endIndex == title.endIndex ? title : cut + "…"
    }

    public init(_ text: String) {
        // Lines end at the byte \n: a Character view would see "\r\n" as one character and miss it.
        var rest = Substring(text)
        while !rest.isEmpty {
            let utf8 = rest.utf8
            let lineEnd = utf8.firstIndex(of: UInt8(ascii: "\n")) ?? utf8.endIndex
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
        var result = ""
        var pendingSpace = false
        var count = 0
        for character in bodyText {
            if character.isWhitespace {
                pendingSpace = !result.isEmpty
                continue
            }
            if pendingSpace {
                result.append(" ")
                count += 1
                pendingSpace = false
            }
            if count >= Self.previewLength {
                result.append("…")
                break
            }
            result.append(character)
            count += 1
        }
        return result
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
