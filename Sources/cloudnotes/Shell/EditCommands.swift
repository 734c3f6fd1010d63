import ArgumentParser
import CloudNotesCommandLine
import CloudNotesProtocol
import Foundation

// MARK: - new

struct New: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a memo from TEXT, or from stdin when no text is given.",
        discussion: "Prints the new memo's id (with --json, the memo).")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The memo's text; its first line is the title.", valueName: "text"))
    var text: String?

    @Flag(name: .long, help: "Print the new memo as JSON.")
    var json = false

    func run(in session: ShellSession) async throws {
        let text = try self.text ?? Self.readStandardInput(terminal: session.terminal)
        let memo = try await session.mediator.create(CreateRequest(text: text)).memo
        if json {
            try session.terminal.printJSON(memo)
        } else {
            session.terminal.print(memo.id.description)
            session.terminal.note("Created “\(MemoTable.printable(memo.title))”.")
        }
    }

    /// All of stdin as UTF-8; on a terminal, says how to end it first.
    static func readStandardInput(terminal: Terminal) throws -> String {
        if isatty(STDIN_FILENO) == 1 { terminal.note("Type the memo, then Ctrl-D on a line of its own.") }
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard let text = String(validating: data, as: UTF8.self) else {
            throw ShellError("stdin is not UTF-8 text; nothing was created")
        }
        return text
    }
}

// MARK: - edit

struct Edit: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "Edit a memo in $VISUAL or $EDITOR; saved when the editor exits.",
        discussion: """
            The memo is saved only if the editor exits with status 0 and the text changed. If the memo \
            changed elsewhere meanwhile, nothing is overwritten: your text is kept in a file and its path printed.
            """)

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The memo's id, or its first characters.", valueName: "id"), completion: MemoIDCompletion.kind)
    var id: String

    @Flag(name: .long, help: "Print the saved memo as JSON.")
    var json = false

    func run(in session: ShellSession) async throws {
        let memo = try await session.select(matching: id)
        if session.store.isReadOnly { throw ShellError("the store is read-only: the memo cannot be changed") }
        let file = try EditorFile(text: memo.text, id: memo.id)
        try file.openInEditor(original: memo.text)
        let edited = try file.editedText(original: memo.text)
        guard edited != memo.text else {
            file.remove()
            session.terminal.note("No change.")
            if json { try session.terminal.printJSON(memo) }
            return
        }
        let saved: Memo
        do {
            saved = try await session.mediator.update(UpdateRequest(id: memo.id, text: edited, baseVersion: memo.version)).memo
        } catch where error.code == .versionConflict {
            throw ShellError("the memo changed elsewhere while you edited it, so it was not saved; your text is in \(file.path)")
        } catch {
            throw ShellError("\(ShellError(error).description); your text is in \(file.path)")
        }
        file.remove()
        if json { try session.terminal.printJSON(saved) } else { session.terminal.note("Saved “\(MemoTable.printable(saved.title))”.") }
    }
}

// MARK: - rm

struct Remove: ShellCommand {
    static let configuration = CommandConfiguration(
        commandName: "rm",
        abstract: "Delete memos: they go to the trash.",
        discussion: """
            A deleted memo stays in the trash for 30 days with its versions (`cloudnotes trash`), and \
            `cloudnotes undelete ID` brings it back; the deletion reaches other devices when they sync. \
            `-` reads ids from stdin, one a line; an id that fails is named, and the others are still deleted.
            """)

    @OptionGroup var options: StoreOptions

    @OptionGroup var memos: MemoIDsArgument

    @Flag(name: .long, help: "Print {\"deleted\": id} as JSON for each memo, one a line.")
    var json = false

    func run(in session: ShellSession) async throws {
        try await session.forEach(memos.read()) { id in
            let memo = try await session.select(matching: id)
            _ = try await session.mediator.delete(DeleteRequest(id: memo.id))
            if json {
                try session.terminal.printJSON(["deleted": memo.id.description])
            } else {
                session.terminal.note("Moved \(memo.id.description.prefix(ShortIDs.minimumLength)) “\(MemoTable.printable(memo.title))” to the trash.")
            }
        }
    }
}
