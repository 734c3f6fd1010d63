import Foundation

// MARK: - Progress bar

/// A one-line progress bar on stderr, drawn only when stderr is a terminal and at most ten times a second.
final class ProgressBar: @unchecked Sendable {
    // One command drives one bar from one thread at a time; the lock only keeps redraws whole.
    private let lock = NSLock()
    private let label: String
    private let isShown: Bool
    private var lastDrawn = Date.distantPast

    init(label: String, terminal: Terminal) {
        self.label = label
        isShown = terminal.errorsAreTerminal
    }

    /// Shows `done` of `total`, and `detail` after the bar (such as "1,200 memos read").
    func update(done: Int, total: Int, detail: String) {
        guard isShown else { return }
        lock.withLock {
            let now = Date()
            guard now.timeIntervalSince(lastDrawn) >= 0.1 || done >= total else { return }
            lastDrawn = now
            let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 0
            let filled = Int((fraction * 30).rounded(.down))
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: 30 - filled)
            let line = "\r\(label) \(bar) \(Int((fraction * 100).rounded(.down)))%  \(detail)\u{1B}[K"
            FileHandle.standardError.write(Data(line.utf8))
        }
    }

    /// Removes the bar, so that the command's last words stand alone.
    func finish() {
        guard isShown else { return }
        lock.withLock { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
