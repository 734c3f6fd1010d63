import ArgumentParser
import CloudNotesCommandLine
import CloudNotesProtocol
import Foundation

// MARK: - list and search

/// How `list` and `search` print their rows.
struct ListingOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("At most this many memos (default: all).", valueName: "n"))
    var limit: Int?

    @Flag(name: .long, help: "Print a JSON array of rows, for scripts.")
    var json = false

    @Option(name: .long, help: ArgumentHelp(
        "Print each memo through this template, such as '{id}\\t{title}': \(MemoTable.fieldNames.map { "{\($0)}" }.joined(separator: ", ")); \\t and \\n are a tab and a line feed.",
        valueName: "template"))
    var format: String?

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
        if json, format != nil { throw ValidationError("--json and --format cannot go together") }
    }

    /// Prints the list as it stands (the search filter applied, if any), newest first.
    func printList(in session: ShellSession, searching: Bool) async throws {
        let wanted = limit ?? .max
        let pageSize = ProtocolRegistry.limits.maxListLimit
        var rows: [MemoRow] = []
        while rows.count < wanted {
            let page = try await session.mediator.list(ListRequest(offset: rows.count, limit: min(pageSize, wanted - rows.count)))
            rows += page.rows
            if page.rows.isEmpty || rows.count >= page.total { break }
        }
        if json {
            try session.terminal.printJSON(rows)
        } else if rows.isEmpty {
            if session.terminal.outputIsTerminal { session.terminal.note(searching ? "No memo matches." : "No memos.") }
        } else {
            let table = MemoTable(terminal: session.terminal, shortIDs: try ShortIDs(store: session.store))
            let texts = table.wantsWholeText(template: format) ? try rows.map { try session.store.memo(id: $0.id.description)?.text } : []
            table.lines(rows, texts: texts, template: format).forEach(session.terminal.print)
        }
    }
}

struct List: ReadingCommand {
    static let configuration = CommandConfiguration(
        abstract: "List memos, newest first: id, date, title and preview.",
        discussion: """
            On a terminal the columns fit its width. In a pipe each memo is one line of tab-separated \
            fields (id, ISO 8601 date, title, preview), nothing cut and nothing coloured, for cut, grep and fzf. \
            Each id is as short as it can be and stay unique, and every command takes it back.
            """)

    @OptionGroup var options: StoreOptions

    @Option(name: .long, help: ArgumentHelp("Only memos whose text contains this (as `cloudnotes search`).", valueName: "query"))
    var search: String?

    @OptionGroup var listing: ListingOptions

    func run(in session: ShellSession) async throws {
        if let search { _ = try await session.mediator.search(SearchRequest(query: search)) }
        try await listing.printList(in: session, searching: search != nil)
    }
}

struct Search: ReadingCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the memos whose text contains QUERY, newest first, as `list` prints them.",
        discussion: "The editors' search: any language, case folded, from one character.")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The text to find.", valueName: "query"))
    var query: String

    @OptionGroup var listing: ListingOptions

    func run(in session: ShellSession) async throws {
        _ = try await session.mediator.search(SearchRequest(query: query))
        try await listing.printList(in: session, searching: true)
    }
}

// MARK: - show

struct Show: ReadingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print memos' texts, exactly as stored.",
        discussion: "With several ids, each text ends with a line feed. `-` reads ids from stdin, one a line.")

    @OptionGroup var options: StoreOptions

    @OptionGroup var memos: MemoIDsArgument

    @Flag(name: .long, help: "Print each memo as JSON (id, text, title, body, dates, version), one a line.")
    var json = false

    func run(in session: ShellSession) async throws {
        let ids = memos.read()
        try await session.forEach(ids) { id in
            let memo = try await session.select(matching: id)
            if json {
                try session.terminal.printJSON(memo)
            } else {
                session.terminal.write(memo.text, endingLine: session.terminal.outputIsTerminal || ids.count > 1)
            }
        }
    }
}

// MARK: - share

struct Share: ReadingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a memo as it would be shared: plain text, Markdown or JSON.",
        discussion: "To stdout, or to a file; an existing file is never replaced unless --overwrite is given.")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The memo's id, or its first characters.", valueName: "id"), completion: MemoIDCompletion.kind)
    var id: String

    @Argument(help: ArgumentHelp("The file to write; - or nothing for stdout.", valueName: "path"), completion: .file())
    var path: String = "-"

    @Option(name: .long, help: "text, markdown or json.")
    var format: ShareFormat = .text

    @Flag(name: .long, help: "Replace an existing file.")
    var overwrite = false

    func run(in session: ShellSession) async throws {
        let memoID = try await session.mediator.memoID(matching: id)
        let shared = try await session.mediator.share(ShareRequest(id: memoID, format: format))
        guard path != "-" else {
            return session.terminal.write(shared.text, endingLine: session.terminal.outputIsTerminal || format != .text)
        }
        if !overwrite, FileManager.default.fileExists(atPath: path) {
            throw ShellError("\(path) exists; use --overwrite to replace it")
        }
        do {
            try Data(shared.text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw ShellError("cannot write \(path): \(error.localizedDescription)")
        }
        session.terminal.note("Wrote “\(MemoTable.printable(shared.title))” to \(path).")
    }
}

extension ShareFormat: ExpressibleByArgument {}
