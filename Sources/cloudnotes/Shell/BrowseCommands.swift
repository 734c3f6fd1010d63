import ArgumentParser
import CloudNotesProtocol
import Foundation

// MARK: - list

struct List: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "List memos, newest first: id, date, title and preview.",
        discussion: "In a pipe nothing is cut and no colour is used, so the output suits grep and fzf.")

    @OptionGroup var options: StoreOptions

    @Option(name: .long, help: ArgumentHelp("Only memos whose text contains this, as the editors' search.", valueName: "query"))
    var search: String?

    @Option(name: .long, help: ArgumentHelp("At most this many memos (default: all).", valueName: "n"))
    var limit: Int?

    @Flag(name: .long, help: "Print a JSON array of rows, for scripts.")
    var json = false

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be 1 or more") }
    }

    func run(in session: ShellSession) async throws {
        let mediator = session.mediator
        if let search { _ = try await mediator.search(SearchRequest(query: search)) }
        let wanted = limit ?? .max
        let pageSize = ProtocolRegistry.limits.maxListLimit
        var rows: [MemoRow] = []
        while rows.count < wanted {
            let page = try await mediator.list(ListRequest(offset: rows.count, limit: min(pageSize, wanted - rows.count)))
            rows += page.rows
            if page.rows.isEmpty || rows.count >= page.total { break }
        }
        if json {
            try session.terminal.printJSON(rows)
        } else if rows.isEmpty {
            if session.terminal.outputIsTerminal { session.terminal.note(search == nil ? "No memos." : "No memo matches.") }
        } else {
            MemoTable(terminal: session.terminal).lines(rows).forEach(session.terminal.print)
        }
    }
}

// MARK: - show

struct Show: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a memo's text, exactly as stored.")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The memo's id, or its first characters (8 are usually enough).", valueName: "id"),
              completion: MemoIDCompletion.kind)
    var id: String

    @Flag(name: .long, help: "Print the memo as JSON (id, text, title, body, dates, version).")
    var json = false

    func run(in session: ShellSession) async throws {
        let memo = try await session.select(matching: id)
        if json {
            try session.terminal.printJSON(memo)
        } else {
            session.terminal.write(memo.text, endingLine: session.terminal.outputIsTerminal)
        }
    }
}

// MARK: - share

struct Share: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a memo as it would be shared: plain text, Markdown or JSON.")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The memo's id, or its first characters.", valueName: "id"), completion: MemoIDCompletion.kind)
    var id: String

    @Option(name: .long, help: "text, markdown or json.")
    var format: ShareFormat = .text

    func run(in session: ShellSession) async throws {
        let memoID = try await session.mediator.memoID(matching: id)
        let shared = try await session.mediator.share(ShareRequest(id: memoID, format: format))
        session.terminal.write(shared.text, endingLine: session.terminal.outputIsTerminal || format != .text)
    }
}

extension ShareFormat: ExpressibleByArgument {}
