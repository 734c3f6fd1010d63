import CShims
import GRDB

// MARK: - Statements prepared without triggers

extension Database {
    /// Runs `body` with this connection's triggers off: the statements it prepares (or runs again)
    /// leave out every trigger, also one whose WHEN clause would let it fire.
    ///
    /// Only for statements whose triggers would do nothing. A trigger that SQLite must consider, even
    /// one that never fires, makes it write an INSERT's rows to a temporary table first when they come
    /// from a multi-row VALUES, and keep a statement journal for each INSERT.
    ///
    /// Turning triggers off or on makes SQLite prepare every statement of the connection again at its
    /// next step: when an import's chunks went through the writer, each parsed its 20-memo INSERT
    /// again, and the first keystroke after a chunk
    /// prepared its own statements again; an import on a file now has a connection of its own
    /// (`MemoStore.openImportConnection`). Should SQLite refuse to turn triggers off, `body` runs with
    /// them on: correct, only slower.
    func withoutTriggers<T>(_ body: () throws -> T) rethrows -> T {
        guard cshims_set_triggers_enabled(UnsafeMutableRawPointer(sqliteConnection), 0) == 0 else {
            return try body()
        }
        defer {
            // Triggers left off would leave every later change out of the full-text index: a connection
            // that cannot have them back must not write again.
            let on = cshims_set_triggers_enabled(UnsafeMutableRawPointer(sqliteConnection), 1)
            precondition(on == 1, "SQLite did not turn this connection's triggers back on")
        }
        return try body()
    }

    /// Turns this connection's triggers off for good, for a connection whose every write is one whose
    /// triggers would do nothing (an import's, see `MemoStore.openImportConnection`): its statements are
    /// prepared once. Should SQLite refuse, they stay on: correct, only slower.
    func turnTriggersOff() {
        _ = cshims_set_triggers_enabled(UnsafeMutableRawPointer(sqliteConnection), 0)
    }
}
