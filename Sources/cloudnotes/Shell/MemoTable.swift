import CloudNotesProtocol
import CloudNotesStore
import Foundation

// MARK: - The list as lines

/// Memo rows as `list` and `search` print them.
///
/// - On a terminal: aligned columns (short id, date in the user's locale, title, preview), each line cut
///   to the terminal's width, ids and titles coloured.
/// - In a pipe: tab-separated fields (short id, ISO 8601 date in local time, title, preview), nothing
///   cut, no colour, control characters escaped, so `cut -f`, `awk -F'\t'` and `fzf --delimiter '\t'`
///   see each field whole.
/// - With a template (`--format '{id}\t{title}'`): the template per row.
///
/// A memo's text never moves the cursor or changes the terminal's colours: control characters are
/// escaped in pipes and templates, and become spaces on a terminal.
struct MemoTable {
    static let maxTitleWidth = 40

    let terminal: Terminal
    let shortIDs: ShortIDs

    /// Whether the lines are whole, for a pipe or a template: then each row's title and preview are
    /// taken from its text, not from the row, whose title and preview are cut for a list pane.
    func wantsWholeText(template: String?) -> Bool {
        template != nil || !terminal.outputIsTerminal
    }

    /// The lines of `rows`: through `template` when given, else as the terminal or the pipe wants them.
    /// `texts` holds the rows' texts when `wantsWholeText`.
    func lines(_ rows: [MemoRow], texts: [String?] = [], template: String? = nil) -> [String] {
        guard wantsWholeText(template: template) else { return columns(rows) }
        return rows.indices.map { index in
            let fields = fields(rows[index], text: texts.indices.contains(index) ? texts[index] : nil)
            return template.map { Self.fill($0, with: fields) } ?? Self.tabSeparated(fields)
        }
    }

    /// The fields a template can name, escaped: the title and the preview whole when the text is given.
    private func fields(_ row: MemoRow, text: String?) -> [String: String] {
        let derived = text.map(MemoText.init)
        return [
            "id": shortIDs.shortID(row.id.description), "uuid": row.id.description,
            "date": terminal.isoDate(row.modifiedAt.date), "modified": row.modifiedAt.iso8601,
            "title": Self.escaped(derived?.title ?? row.title), "preview": Self.escaped(derived?.bodyOnOneLine ?? row.preview),
        ]
    }

    private static func tabSeparated(_ fields: [String: String]) -> String {
        ["id", "date", "title", "preview"].map { fields[$0] ?? "" }.joined(separator: "\t")
    }

    /// `template` with each `{name}` replaced by its field, and `\t`, `\n` and `\\` read as a tab, a line
    /// feed and a backslash (a shell passes them as two characters).
    static func fill(_ template: String, with fields: [String: String]) -> String {
        var result = ""
        var rest = Substring(template)
        while let first = rest.first {
            if first == "\\", let next = rest.dropFirst().first, let escaped = ["t": "\t", "n": "\n", "\\": "\\"][next] {
                result += escaped
                rest = rest.dropFirst(2)
            } else if first == "{", let close = rest.firstIndex(of: "}"), let value = fields[String(rest[rest.index(after: rest.startIndex)..<close])] {
                result += value
                rest = rest[rest.index(after: close)...]
            } else {
                result.append(first)
                rest = rest.dropFirst()
            }
        }
        return result
    }

    /// The names a template can use, for its help.
    static let fieldNames = ["id", "uuid", "date", "modified", "title", "preview"]

    /// `text` with a backslash, a tab, a line end and every other control character written as an
    /// escape (`\\`, `\t`, `\n`, `\r`, `\x1b`), so that it stays one field on one line.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\t": result += "\\t"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            default:
                if scalar.properties.generalCategory == .control {
                    result += "\\x" + String(scalar.value, radix: 16).leftPadded(to: 2)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    // MARK: Columns, on a terminal

    private func columns(_ rows: [MemoRow]) -> [String] {
        let ids = rows.map { shortIDs.shortID($0.id.description) }
        let dates = rows.map { terminal.date($0.modifiedAt.date) }
        let titles = rows.map { Self.printable($0.title) }
        let idWidth = ids.map(\.count).max() ?? 0
        let dateWidth = dates.map(\.displayWidth).max() ?? 0
        let titleWidth = min(Self.maxTitleWidth, titles.map(\.displayWidth).max() ?? 0)
        return rows.indices.map { index in
            let title = titles[index].truncated(toWidth: titleWidth)
            var line = terminal.styled(ids[index], "33") + String(repeating: " ", count: idWidth - ids[index].count) + "  "
                + dates[index].padded(toWidth: dateWidth) + "  " + terminal.styled(title, "1")
            var preview = Self.printable(rows[index].preview)
            if let width = terminal.width {
                let used = idWidth + 2 + dateWidth + 2 + titleWidth + 2
                preview = width > used + 1 ? preview.truncated(toWidth: width - used) : ""
            }
            if !preview.isEmpty {
                line += String(repeating: " ", count: titleWidth - title.displayWidth) + "  " + preview
            }
            return line
        }
    }

    /// `text` with control characters (tabs, newlines, escapes) as spaces.
    static func printable(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map {
            $0.properties.generalCategory == .control || $0.properties.generalCategory == .format ? " " : $0
        }))
    }
}

// MARK: - Display width

extension String {
    /// Columns this string takes on a terminal: Hangul, CJK and emoji take two, combining marks none.
    var displayWidth: Int {
        unicodeScalars.reduce(0) { $0 + $1.displayWidth }
    }

    /// This string cut to at most `width` columns, ending in "…" when something was cut.
    func truncated(toWidth width: Int) -> String {
        guard displayWidth > width else { return self }
        guard width > 0 else { return "" }
        var result = String.UnicodeScalarView()
        var used = 0
        for scalar in unicodeScalars {
            if used + scalar.displayWidth > width - 1 { break }
            result.append(scalar)
            used += scalar.displayWidth
        }
        return String(result) + "…"
    }

    func padded(toWidth width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - displayWidth))
    }

    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: max(0, width - count)) + self
    }
}

extension Unicode.Scalar {
    var displayWidth: Int {
        switch properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60,
             0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}
