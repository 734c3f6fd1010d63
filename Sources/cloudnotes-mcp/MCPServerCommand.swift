import ArgumentParser
import CloudNotesCommandLine
import CloudNotesMCP
import Foundation

// MARK: - cloudnotes-mcp

/// The MCP server that `cloudnotes mcp` runs (see `MCPCommand` there for why it is a binary of its own).
@main
struct MCPServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cloudnotes mcp", abstract: MCPOptions.abstract, discussion: MCPOptions.discussion)

    @OptionGroup var options: MCPOptions

    func run() async throws {
        EnvironmentSecrets.takeAll()
        let protocolOutput = StdioServing.reserveStandardOutput()
        let logger = LogSetup.bootstrap(level: options.logging.logLevel, file: options.logging.logFile)
        let store = try StdioServing.openStore(options.store, logger: logger)
        store.historyPolicy = options.history.policy
        do {
            try await MCPService.run(
                store: store, readOnly: options.readOnly, input: STDIN_FILENO, output: protocolOutput, logger: logger)
        } catch {
            logger.critical("the MCP server stopped: \(error)")
            store.checkpoint()
            throw ExitCode(1)
        }
        store.checkpoint()
    }
}
