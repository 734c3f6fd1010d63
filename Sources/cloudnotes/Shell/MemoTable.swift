import CloudNotesProtocol
import Foundation

// MARK: - The list as a table

/// Memo rows as aligned columns: short id, date, title and preview.
///
/// On a terminal, each line is cut to its width; in a pipe, nothing is cut, so `grep` and `fzf` see
/// every word. Control characters in titles and previews become spaces: a memo must not be able to
/// move the cursor or change the terminal's colours.
struct MemoTable {
    static let shortIDLength = 8
    static let maxTitleWidth = 40

    let terminal: Terminal

    func lines(_ rows: [MemoRow]) -> [String] {
        let dates = rows.map { terminal.date($0.modifiedAt.date) }
        let titles = rows.map { Self.printable($0.title) }
        let dateWidth = dates.map(\.displayWidth).max() ?? 0
        let titleWidth = min(Self.maxTitleWidth, titles.map(\.displayWidth).max() ?? 0)
        return rows.indices.map { index in
            let id = String(rows[index].id.description.prefix(Self.shortIDLength))
            let title = titles[index].truncated(toWidth: titleWidth)
            var line = terminal.styled(id, "33") + "  " + dates[index].padded(toWidth: dateWidth) + "  "
                + terminal.styled(title, "1")
            var preview = Self.printable(rows[index].preview)
            if let width = terminal.width {
                let used = Self.shortIDLength + 2 + dateWidth + 2 + titleWidth + 2
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
