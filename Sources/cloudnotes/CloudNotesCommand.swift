import ArgumentParser
import CloudNotesCommandLine
import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesServer
import CloudNotesStore
import Foundation
import Logging

// MARK: - Command line

/// The `cloudnotes` executable: the protocol server and the shell's subcommands.
@main
struct CloudNotesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudnotes",
        abstract: "A synchronized memo pad for editors: a JSON-RPC 2.0 server on stdin and stdout, and a command line.",
        discussion: "With no subcommand, serves the protocol (`cloudnotes serve`). Shell completion: `cloudnotes --generate-completion-script bash|zsh|fish`.",
        version: ProtocolRegistry.serverVersion,
        subcommands: [
            Serve.self, List.self, Search.self, Show.self, New.self, Edit.self, Remove.self, History.self, Restore.self,
            Trash.self, Undelete.self, Share.self, Import.self, Export.self, Sync.self, MCPCommand.self, ProtocolSchema.self,
        ],
        defaultSubcommand: Serve.self)

    /// Runs the command line, once the allocator is set up (see `ProcessMemory`).
    static func main() async {
        ProcessMemory.configureAllocator()
        EnvironmentSecrets.takeAll()
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let unknown = UnknownCommand(arguments, known: configuration.subcommands.map { $0._commandName } + ["help"]) {
            unknown.exit()
        }
        if let serve = Serve.parsedAlone(arguments) {
            do {
                try await serve.run()
            } catch {
                exit(withError: error)
            }
            return
        }
        await main(nil)
    }
}

// MARK: - serve

/// `cloudnotes serve`: the JSON-RPC server an editor spawns.
struct Serve: AsyncParsableCommand {
    static let commandName = "serve"
    static let configuration = CommandConfiguration(
        commandName: commandName,
        abstract: "Serve the CloudNotes protocol on stdin and stdout (the default).")

    @OptionGroup var options: StoreOptions
    @OptionGroup var logging: LogOptions
    @OptionGroup var history: HistoryOptions

    @Option(name: .long, help: ArgumentHelp(
        "Exit when this process (the editor that started the server) is gone, as language servers do.",
        valueName: "pid"))
    var clientProcessId: Int32?

    @Option(name: .long, help: ArgumentHelp(
        "Seconds between the server's own syncs, when the store has a remote; 0 for none.", valueName: "seconds"))
    var syncInterval: Int = 300

    @Option(name: .long, help: ArgumentHelp(
        "Seconds edits must settle before the sync they cause.", valueName: "seconds"))
    var syncDelay: Double = 3

    /// What LSP clients pass by habit to ask for stdio; it is the only transport, so it changes nothing.
    @Flag(name: .long, help: ArgumentHelp("Serve on stdin and stdout (always so; accepted for LSP clients).", visibility: .hidden))
    var stdio = false

    /// `serve`'s own flags parsed without the rest of the command tree, or nil when the arguments ask
    /// for anything else or do not parse (another subcommand, help, the version, a completion script,
    /// a mistake: `parse` throws for each), which the whole tree then handles, messages and all.
    ///
    /// Editors start the server on every launch, and the first parse of the whole tree is slow in this
    /// static binary: ArgumentParser reflects every subcommand's properties, and each new type's first
    /// cast scans all the binary's protocol conformances. `serve`'s alone costs a good part less.
    static func parsedAlone(_ arguments: [String]) -> Serve? {
        var flags = arguments
        if flags.first == commandName {
            flags.removeFirst()
        } else if let first = flags.first, !first.hasPrefix("-") {
            return nil  // another subcommand, or `help`
        }
        return try? parse(flags)
    }

    func validate() throws {
        guard syncInterval >= 0 else { throw ValidationError("--sync-interval must be 0 or more") }
        guard syncDelay >= 0, syncDelay.isFinite else { throw ValidationError("--sync-delay must be 0 or more") }
    }

    func run() async throws {
        let protocolOutput = StdioServing.reserveStandardOutput()
        MemoPresenter.loadFormattingDataInBackground()
        let logger = LogSetup.bootstrap(level: logging.logLevel, file: logging.logFile)
        let store = try StdioServing.openStore(options, logger: logger)
        if let clientProcessId {
            ParentWatcher.exitWhenGone(clientProcessId) {
                logger.notice("the client process \(clientProcessId) is gone: exiting")
                store.checkpoint()
            }
        }
        var configuration = ServerConfiguration.standard
        configuration.history = history.policy
        configuration.sync = SyncSettings(interval: .seconds(syncInterval), settleDelay: .milliseconds(Int(syncDelay * 1000)))
        let server = Server(store: store, input: STDIN_FILENO, output: protocolOutput, configuration: configuration, logger: logger)
        let code = await server.run()
        store.checkpoint()
        // Returning is the quick way out: ArgumentParser builds a help text for any error it is given,
        // even `ExitCode.success`.
        if code != 0 { throw ExitCode(code) }
    }
}

// MARK: - protocol-schema

/// Prints the machine-readable protocol description (`protocol/protocol.schema.json`).
struct ProtocolSchema: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "protocol-schema",
        abstract: "Print the protocol's JSON Schema description, as in protocol/protocol.schema.json.")

    func run() throws {
        print(ProtocolDescription.json)
    }
}
