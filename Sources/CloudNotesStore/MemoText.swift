// MARK: - Derived parts of a memo's text

/// The title, body and preview a memo's text stands for.
///
/// The text is the only thing stored as the user wrote it; everything here is derived from it, so that
/// no client can make a title disagree with its text.
public struct MemoText: Sendable, Hashable {
    /// The first line with non-blank characters, trimmed; empty when there is none.
    public let title: String
    /// Everything after the title line, as written.
    public let body: String

    public static let previewLength = 100

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
                body = String(rest)
                return
            }
        }
        title = ""
        body = ""
    }

    /// The body on one line: runs of white space (newlines included) become one space, cut to about 100 characters.
    public var preview: String {
        var result = ""
        var pendingSpace = false
        var count = 0
        for character in body {
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
    func trimmingBlanks() -> Substring {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return self[first...last]
    }
}
