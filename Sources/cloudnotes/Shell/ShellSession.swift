import ArgumentParser
import CloudNotesCommandLine
import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesStore
import Foundation

// MARK: - Shell commands

/// A subcommand that works on the store for a person at a shell, through the same mediator the server drives.
///
/// Its `run()` opens the store and turns every failure into one sentence on stderr and exit status 1,
/// so no command prints a Swift error or a stack of causes.
protocol ShellCommand: AsyncParsableCommand {
    var options: StoreOptions { get }
    /// Whether the command only reads: then it never creates a store that is not there.
    var readsOnly: Bool { get }
    func run(in session: ShellSession) async throws
}

/// A shell command that only reads (`list`, `show`, `export`...): it never creates a store that is not there.
protocol ReadingCommand: ShellCommand {}

extension ReadingCommand {
    var readsOnly: Bool { true }
}

extension ShellCommand {
    var readsOnly: Bool { false }

    func run() async throws {
        let terminal = Terminal()
        do {
            let session = try ShellSession(options: options, terminal: terminal, readsOnly: readsOnly)
            try await run(in: session)
        } catch let error as ExitCode {
            throw error
        } catch let error as ResponseError {
            terminal.fail(ShellError(error).description)
        } catch {
            terminal.fail("\(error)")
        }
    }
}

/// A failure told to the person at the shell.
struct ShellError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }

    /// A protocol error as a sentence for people: the JSON-RPC prefixes say nothing to them, and the
    /// ids an ambiguous prefix matched are what they need to pick one.
    init(_ error: ResponseError) {
        var message = error.message
        for prefix in ["Invalid params: ", "Internal error: "] where message.hasPrefix(prefix) {
            message.removeFirst(prefix.count)
        }
        if case .object(let data)? = error.data, case .array(let candidates)? = data["candidates"] {
            message += ":" + candidates.compactMap { if case .string(let id) = $0 { " " + id } else { nil } }.joined()
        }
        description = message
    }
}

// MARK: - Session

/// One shell command's view of the store: the mediator (with no panes to tell), the importer and the
/// exporter the server uses, and how to write for this terminal.
struct ShellSession {
    let store: MemoStore
    let mediator: SplitViewMediator
    let terminal: Terminal

    init(options: StoreOptions, terminal: Terminal, readsOnly: Bool) throws {
        let (path, named) = options.storeLocation
        do {
            if readsOnly, !FileManager.default.fileExists(atPath: path) {
                // A mistyped path says so; the default store, not made yet, is an empty one.
                guard !named else { throw ShellError("there is no store at \(path)") }
                store = try MemoStore()
            } else {
                store = try MemoStore(path: path, durability: options.durability)
                PrivacyWarnings.warnOnce(MemoStore.privacyProblems(ofStoreAt: path), terminal: terminal)
            }
        } catch let error as ShellError {
            throw error
        } catch {
            throw ShellError("cannot open the store at \(path): \(error)")
        }
        if store.isReadOnly { terminal.warn("the store is read-only: changes will be refused") }
        store.authorChanges(as: .shell)
        self.terminal = terminal
        mediator = SplitViewMediator(
            store: store, sink: NoPanes(),
            presenter: MemoPresenter(locale: terminal.locale, timeZone: terminal.timeZone),
            limits: ProtocolRegistry.limits)
    }

    /// The memo whose id starts with `prefix`, selected as a front end would to show it.
    func select(matching prefix: String) async throws -> Memo {
        let id = try await mediator.memoID(matching: prefix)
        return try await mediator.select(SelectRequest(id: id)).memo
    }
}

/// The shell has no panes: the mediator's notifications go nowhere.
struct NoPanes: NotificationSink {
    func send(_ notification: some NotificationType) {}
}
