import CloudNotesCommandLine
import Foundation

// MARK: - The permissions warning, once

/// Warns of a store or folder other users can read the first time a command sees it so, and again
/// only when its permissions change: a warning at every command is noise that hides the one that
/// matters. (`serve` logs it at every start, where logs are read once.)
///
/// What was said is kept in `$XDG_STATE_HOME/cloudnotes/privacy-warnings`, one warning a line; a warning
/// names the path and its mode, so a changed mode is a new warning.
enum PrivacyWarnings {
    static func warnOnce(_ problems: [String], terminal: Terminal,
                         environment: [String: String] = ProcessInfo.processInfo.environment) {
        let folder = XDG.home("XDG_STATE_HOME", default: ".local/state", environment) + "/cloudnotes"
        let file = folder + "/privacy-warnings"
        let said = Set((try? String(contentsOfFile: file, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? [])
        let new = problems.filter { !said.contains($0) }
        for problem in new { terminal.warn(problem) }
        // Only what is still true is kept, so a store made private and opened up again is told again.
        let kept = Set(problems)
        guard kept != said else { return }
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                 attributes: [.posixPermissions: 0o700])
        try? Data(kept.sorted().map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: file), options: .atomic)
    }
}
