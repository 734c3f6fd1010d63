import ArgumentParser
import CloudNotesCommandLine
import CloudNotesProtocol
import CloudNotesStore
import Foundation

// MARK: - history

struct History: ReadingCommand {
    static let configuration = CommandConfiguration(
        abstract: "List a memo's kept versions, newest first, or print one version's text.",
        discussion: """
            A version is kept when a text is replaced after it rested (5 minutes by default), by another \
            session, the shell or another device, and at every merge and restore. Each line: the version's \
            number, its date, who wrote it, its size in bytes and its title (in a pipe, tab-separated). \
            `cloudnotes restore ID V` makes version V the memo's text again. Memos in the trash keep theirs.
            """)

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The memo's id (live or in the trash), or its first characters.", valueName: "id"),
              completion: MemoIDCompletion.historyKind)
    var id: String

    @Argument(help: ArgumentHelp("A version's number: print its text.", valueName: "version"))
    var version: Int64?

    @Flag(name: .long, help: "Print JSON: the versions (as memo/history), or the version with its text.")
    var json = false

    func validate() throws {
        if let version, version < 1 { throw ValidationError("a version's number is 1 or more") }
    }

    func run(in session: ShellSession) async throws {
        let memoID = try await session.mediator.memoID(matching: id, among: .liveOrTrash)
        if let version {
            let result = try await session.mediator.version(VersionRequest(id: memoID, version: version))
            if json { try session.terminal.printJSON(result) } else { session.terminal.write(result.text, endingLine: session.terminal.outputIsTerminal) }
            return
        }
        var versions: [VersionRow] = []
        while true {
            let page = try await session.mediator.history(
                HistoryRequest(id: memoID, offset: versions.count, limit: ProtocolRegistry.limits.maxListLimit))
            versions += page.versions
            if page.versions.isEmpty || versions.count >= page.total { break }
        }
        if json {
            try session.terminal.printJSON(HistoryResult(id: memoID, total: versions.count, versions: versions))
        } else if versions.isEmpty {
            session.terminal.note("No earlier versions are kept of this memo.")
        } else {
            versions.map { line($0, terminal: session.terminal) }.forEach(session.terminal.print)
        }
    }

    /// One version as a line: aligned on a terminal, tab-separated in a pipe.
    private func line(_ row: VersionRow, terminal: Terminal) -> String {
        let origin = row.device.map { "device \($0.prefix(8))" } ?? row.origin.rawValue
        guard terminal.outputIsTerminal else {
            return [String(row.version), terminal.isoDate(row.modifiedAt.date), origin, String(row.size), MemoTable.escaped(row.title)]
                .joined(separator: "\t")
        }
        return terminal.styled(String(row.version).padded(toWidth: 4), "33") + "  " + terminal.date(row.modifiedAt.date)
            + "  " + origin.padded(toWidth: 15) + "  " + "\(row.size) B".padded(toWidth: 10) + "  "
            + terminal.styled(MemoTable.printable(row.title), "1")
    }
}

// MARK: - restore

struct Restore: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make an earlier version of a memo its text again.",
        discussion: "The text it replaces is kept as a version too, so a restore can be undone the same way.")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The memo's id, or its first characters.", valueName: "id"), completion: MemoIDCompletion.kind)
    var id: String

    @Argument(help: ArgumentHelp("The version's number, as `cloudnotes history ID` lists it.", valueName: "version"))
    var version: Int64

    @Flag(name: .long, help: "Print the restored memo as JSON.")
    var json = false

    func validate() throws {
        if version < 1 { throw ValidationError("a version's number is 1 or more") }
    }

    func run(in session: ShellSession) async throws {
        let memo = try await session.select(matching: id)
        let restored = try await session.mediator.restore(RestoreRequest(id: memo.id, version: version)).memo
        if json {
            try session.terminal.printJSON(restored)
        } else {
            session.terminal.note("Restored version \(version) of “\(MemoTable.printable(restored.title))”.")
        }
    }
}

// MARK: - trash

struct Trash: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the memos in the trash, most recently deleted first, or empty it.",
        discussion: """
            A deleted memo stays in the trash for 30 days (`cloudnotes serve --trash-days`), then it is \
            purged with its versions. `cloudnotes undelete ID` brings one back. Each line: id, date of \
            deletion, title, preview (in a pipe, tab-separated).
            """)

    @OptionGroup var options: StoreOptions

    @Flag(name: .long, help: "Print a JSON array of rows (id, title, preview, deletedAt, purgeAt).")
    var json = false

    @Flag(name: .long, help: "Purge every memo in the trash now, with its versions.")
    var empty = false

    func run(in session: ShellSession) async throws {
        if empty {
            let purged = try await session.mediator.emptyTrash(TrashEmptyRequest()).purged
            if json {
                try session.terminal.printJSON(["purged": purged])
            } else {
                session.terminal.note("Purged \(purged) \(purged == 1 ? "memo" : "memos").")
            }
            return
        }
        var rows: [TrashRow] = []
        while true {
            let page = try await session.mediator.trash(TrashListRequest(offset: rows.count, limit: ProtocolRegistry.limits.maxListLimit))
            rows += page.rows
            if page.rows.isEmpty || rows.count >= page.total { break }
        }
        if json {
            try session.terminal.printJSON(rows)
        } else if rows.isEmpty {
            if session.terminal.outputIsTerminal { session.terminal.note("The trash is empty.") }
        } else {
            let table = MemoTable(terminal: session.terminal, shortIDs: try ShortIDs(store: session.store, among: .trash))
            let listed = rows.map { MemoRow(id: $0.id, title: $0.title, preview: $0.preview, modifiedAt: $0.deletedAt, displayDate: $0.displayDate) }
            table.lines(listed).forEach(session.terminal.print)
        }
    }

    /// A trash that only lists is read like `list`: never created where there is none.
    var readsOnly: Bool { !empty }
}

// MARK: - undelete

struct Undelete: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "Bring memos back from the trash, with their texts and versions.",
        discussion: "`-` reads ids from stdin, one a line; an id that fails is named, and the others still come back.")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("Ids of memos in the trash, or their first characters as `trash` prints them; - reads them from stdin.",
                                 valueName: "id"),
              completion: MemoIDCompletion.trashKind)
    var ids: [String]

    @Flag(name: .long, help: "Print each memo brought back as JSON, one a line.")
    var json = false

    func run(in session: ShellSession) async throws {
        try await session.forEach(MemoIDsArgument.read(ids)) { id in
            let memoID = try await session.mediator.memoID(matching: id, among: .trash)
            let memo = try await session.mediator.undelete(UndeleteRequest(id: memoID)).memo
            if json {
                try session.terminal.printJSON(memo)
            } else {
                session.terminal.note("Brought back \(memo.id.description.prefix(ShortIDs.minimumLength)) “\(MemoTable.printable(memo.title))”.")
            }
        }
    }
}
