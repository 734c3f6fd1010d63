import ArgumentParser
import Foundation

// MARK: - Terminal

/// What the shell command writes to: whether stdout and stderr are terminals, their width, the user's
/// locale and time zone, and whether colour is wanted.
struct Terminal: Sendable {
    let outputIsTerminal: Bool
    let errorsAreTerminal: Bool
    /// Colour only on a terminal, and never when `NO_COLOR` is set or `TERM` is `dumb` (no-color.org).
    let usesColour: Bool
    /// The width of the terminal stdout is, or nil when stdout is a pipe or a file (no truncation then).
    let width: Int?
    let locale: Locale
    let timeZone: TimeZone

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        outputIsTerminal = isatty(STDOUT_FILENO) == 1
        errorsAreTerminal = isatty(STDERR_FILENO) == 1
        usesColour = outputIsTerminal && environment["NO_COLOR", default: ""].isEmpty && environment["TERM"] != "dumb"
        width = outputIsTerminal ? Self.columns(environment) : nil
        locale = Self.locale(environment)
        timeZone = TimeZone.current
    }

    // MARK: - Writing

    func print(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// `text` as it is; with a newline after it when `endingLine` and it has none (so a prompt starts on its own line).
    func write(_ text: String, endingLine: Bool) {
        var text = text
        if endingLine, !text.isEmpty, !text.hasSuffix("\n") { text += "\n" }
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// `value` as one JSON document on one line, keys sorted, for scripts and `jq`.
    func printJSON(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        FileHandle.standardOutput.write(try encoder.encode(value) + Data("\n".utf8))
    }

    func warn(_ message: String) {
        FileHandle.standardError.write(Data("cloudnotes: warning: \(message)\n".utf8))
    }

    /// Says what went wrong on stderr.
    func error(_ message: String) {
        FileHandle.standardError.write(Data("cloudnotes: error: \(message)\n".utf8))
    }

    /// Says what went wrong on stderr and ends the command with exit status 1.
    func fail(_ message: String) -> Never {
        error(message)
        Foundation.exit(1)
    }

    /// A note for the person watching (such as "Saved."), on stderr so that it never mixes with output
    /// a script reads.
    func note(_ message: String) {
        FileHandle.standardError.write(Data("\(message)\n".utf8))
    }

    /// `text` in an ANSI style (such as "1" for bold, "33" for yellow) when colour is on.
    func styled(_ text: String, _ style: String) -> String {
        usesColour ? "\u{1B}[\(style)m\(text)\u{1B}[0m" : text
    }

    // MARK: - Dates

    /// A date as the user's locale writes it, short: "11/21/2026, 9:41 AM" or "2026. 11. 21. 오전 9:41".
    func date(_ date: Date) -> String {
        date.formatted(Date.FormatStyle(date: .numeric, time: .shortened, locale: locale, timeZone: timeZone))
    }

    /// A date in ISO 8601, in the local time zone: "2026-11-21T09:41:07+09:00", for pipes and scripts.
    func isoDate(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(timeZoneSeparator: .colon, timeZone: timeZone))
    }

    // MARK: - Environment

    /// The terminal's columns: the window size, else `COLUMNS`, else 80.
    private static func columns(_ environment: [String: String]) -> Int {
        var size = winsize()
        if ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return environment["COLUMNS"].flatMap(Int.init) ?? 80
    }

    /// The locale for dates, from `LC_ALL`, `LC_TIME` or `LANG` as POSIX orders them ("ko_KR.UTF-8" → ko_KR).
    static func locale(_ environment: [String: String]) -> Locale {
        let setting = ["LC_ALL", "LC_TIME", "LANG"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? ""
        let name = setting.split(separator: ".").first.map(String.init)?.split(separator: "@").first.map(String.init) ?? ""
        return name.isEmpty || name == "C" || name == "POSIX" ? Locale(identifier: "en_US") : Locale(identifier: name)
    }
}
