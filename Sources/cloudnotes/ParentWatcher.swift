import Foundation

// MARK: - Client process

/// Ends the server when the editor that started it is gone, so that no orphan keeps the store open.
enum ParentWatcher {
    /// How often the client process is looked for.
    static let interval: TimeInterval = 0.5

    /// Checks on a thread of its own that `pid` still exists; when it does not, runs `beforeExit` and
    /// exits with code 0. Every acknowledged change is already committed, so nothing is lost.
    static func exitWhenGone(_ pid: Int32, beforeExit: @escaping @Sendable () -> Void) {
        let thread = Thread {
            while isRunning(pid) {
                Thread.sleep(forTimeInterval: interval)
            }
            beforeExit()
            exit(0)
        }
        thread.name = "cloudnotes.client-process"
        thread.start()
    }

    static func isRunning(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}
