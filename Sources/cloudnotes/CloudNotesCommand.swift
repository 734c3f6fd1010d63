import ArgumentParser
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
            Trash.self, Undelete.self, Share.self, Import.self, Export.self, Sync.self, ProtocolSchema.self,
        ],
        defaultSubcommand: Serve.self)

    /// Runs the command line, once the allocator is set up (see `ProcessMemory`).
    static func main() async {
        ProcessMemory.configureAllocator()
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

/// Options every subcommand that opens the store shares.
struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The store file (default: $CLOUDNOTES_STORE, else $XDG_DATA_HOME/cloudnotes/notes.sqlite).",
        valueName: "path"), completion: .file())
    var store: String?

    @Option(name: .long, help: ArgumentHelp(
        "committed: a change is acknowledged once committed to the write-ahead log (survives a killed process); synced: also after fsync (survives a power cut, slower).",
        valueName: "mode"))
    var durability: MemoStore.Durability = .committed

    /// The store path from the flag, the environment or the XDG default, in that order.
    var storePath: String { Self.storeLocation(flag: store).path }

    /// The store path, and whether the user named it (with `--store` or `CLOUDNOTES_STORE`) rather
    /// than taking the default.
    var storeLocation: (path: String, named: Bool) { Self.storeLocation(flag: store) }

    static func storePath(flag: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        storeLocation(flag: flag, environment: environment).path
    }

    static func storeLocation(flag: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (path: String, named: Bool)
    {
        if let flag { return (flag, true) }
        if let store = environment["CLOUDNOTES_STORE"], !store.isEmpty { return (store, true) }
        return (XDG.home("XDG_DATA_HOME", default: ".local/share", environment) + "/cloudnotes/notes.sqlite", false)
    }
}

/// Where the server's logs go; the shell commands write their few words to stderr themselves.
struct LogOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    @Option(name: .long, help: ArgumentHelp("Append logs to this file instead of stderr.", valueName: "path"), completion: .file())
    var logFile: String?
}

/// What of the history the store keeps: when a text becomes a version, and how long versions and the trash last.
struct HistoryOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "A text that rested this long is kept as a version when it is next changed.", valueName: "seconds"))
    var versionPause: Int = 300

    @Option(name: .long, help: ArgumentHelp(
        "Days a deleted memo stays in the trash before it is purged with its versions.", valueName: "days"))
    var trashDays: Int = 30

    @Option(name: .long, help: ArgumentHelp(
        "Days versions are kept: all from the last 7 days, then one a day for 30 days, then one a week.",
        valueName: "days"))
    var keepHistory: Int = 90

    func validate() throws {
        guard versionPause >= 0 else { throw ValidationError("--version-pause must be 0 or more") }
        guard trashDays >= 0 else { throw ValidationError("--trash-days must be 0 or more") }
        guard keepHistory >= 0 else { throw ValidationError("--keep-history must be 0 or more") }
    }

    var policy: HistoryPolicy {
        var policy = HistoryPolicy()
        policy.versionPause = Int64(versionPause) * 1000
        policy.trashDays = trashDays
        policy.keepHistoryDays = keepHistory
        return policy
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension MemoStore.Durability: ExpressibleByArgument {}

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
        // Only protocol messages may reach stdout: keep the real stdout for the server, and point
        // file descriptor 1 at stderr so that a stray print from anywhere cannot corrupt the stream.
        let protocolOutput = dup(STDOUT_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        // A client that goes away makes writes fail (EPIPE), which the server handles; not a signal that kills it.
        signal(SIGPIPE, SIG_IGN)

        MemoPresenter.loadFormattingDataInBackground()
        let logger = LogSetup.bootstrap(level: logging.logLevel, file: logging.logFile)
        let store: MemoStore
        do {
            store = try MemoStore(path: options.storePath, durability: options.durability)
        } catch {
            logger.critical("cannot open the store: \(error)")
            throw ExitCode(2)
        }
        logger.info("serving \(options.storePath)")
        for problem in MemoStore.privacyProblems(ofStoreAt: options.storePath) {
            logger.warning("\(problem)")
        }
        if store.isReadOnly {
            logger.warning("the store is read-only: memos can be read, and every change will be refused")
        }
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
