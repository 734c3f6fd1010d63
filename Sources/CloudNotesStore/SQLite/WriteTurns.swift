import Foundation

// MARK: - Turns at the write lock

/// Hands the store file's write lock to the connections of this process in the order they asked for it.
///
/// SQLite makes a connection that finds the write lock taken poll for it, sleeping between looks. The
/// server's sync writes through a second connection in transactions that follow each other closely, so
/// a keystroke's transaction got the lock only when one of its looks fell between two of them, and
/// waited long during a first sync. Connections that share turns take a ticket before they begin a
/// write transaction and wait for their number, so none waits longer than the transactions asked for
/// before it. Other processes (the shell) still meet SQLite's polling.
///
/// Why not one writer connection for both, as GRDB's `DatabasePool` would give: the split view learns
/// of sync's changes as of another process's, through SQLite's `data_version`, which moves only with
/// other connections' commits. On one connection, sync's changes would need an announcement path of
/// their own; the turns cost a ticket per transaction and keep one path.
///
/// `@unchecked Sendable`: its state is only read and written under the condition's lock.
final class WriteTurns: @unchecked Sendable {
    private let condition = NSCondition()
    /// The ticket the next caller takes.
    private var nextTicket: UInt64 = 0
    /// The ticket whose holder may write now.
    private var serving: UInt64 = 0
    /// The thread that holds the turn, if any.
    private var holder: pthread_t?

    /// How many callers hold a turn or wait for one.
    var askedFor: Int {
        condition.lock()
        defer { condition.unlock() }
        return Int(nextTicket &- serving)
    }

    /// Runs `body` once every caller that asked before has finished.
    ///
    /// Not reentrant: a write of any store sharing these turns, asked for inside `body`, would wait for
    /// itself forever, so it stops the process instead (no write transaction begins inside another).
    func take<T>(_ body: () throws -> T) rethrows -> T {
        condition.lock()
        if let holder, pthread_equal(holder, pthread_self()) != 0 {
            condition.unlock()
            preconditionFailure("a write asked for inside another write of the same store file")
        }
        let ticket = nextTicket
        nextTicket &+= 1
        while serving != ticket { condition.wait() }
        holder = pthread_self()
        condition.unlock()
        defer {
            condition.lock()
            holder = nil
            serving &+= 1
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }
}
