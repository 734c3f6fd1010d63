import ArgumentParser
import CloudNotesCommandLine
import Foundation

// MARK: - mcp

/// `cloudnotes mcp`: the store for AI assistants, served by `cloudnotes-mcp`, which this runs in its place.
///
/// The MCP SDK links Foundation's networking, and with it libcurl and its libraries, whose loading
/// slows every start of a process (bench/FINDINGS.md); in a binary of its own, only `mcp` pays for it,
/// not every editor's `serve` and every shell command.
struct MCPCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp", abstract: MCPOptions.abstract, discussion: MCPOptions.discussion)

    @OptionGroup var options: MCPOptions

    func run() throws {
        let arguments = Array(CommandLine.arguments.drop { $0 != Self._commandName }.dropFirst())
        let server = Self.serverPath()
        guard FileManager.default.isExecutableFile(atPath: server) else {
            throw ValidationError("""
                cloudnotes mcp runs \(server), which is missing: build it with \
                `swift build -c release --product cloudnotes-mcp` and put it beside cloudnotes
                """)
        }
        let argv = ([server] + arguments).map { strdup($0) } + [nil]
        execv(server, argv)
        throw ValidationError("cannot run \(server): \(String(cString: strerror(errno)))")
    }

    /// `cloudnotes-mcp` in the folder of this executable (symbolic links followed).
    static func serverPath() -> String {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("cloudnotes-mcp").path
    }
}
