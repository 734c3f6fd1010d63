import ArgumentParser
import CloudNotesProtocol
import Foundation

// MARK: - Ids on the command line

/// The memo ids a command such as `show` or `rm` takes: ids or their prefixes, and `-` for ids on stdin.
struct MemoIDsArgument: ParsableArguments {
    @Argument(help: ArgumentHelp("Memo ids, or their first characters as `list` prints them; - reads them from stdin.", valueName: "id"),
              completion: MemoIDCompletion.kind)
    var ids: [String]

    /// Each argument, and for `-`, one id a line on stdin (the first word of each line, so that `list`'s
    /// lines work as they are).
    func read() -> [String] { Self.read(ids) }

    /// `arguments` as ids: each one, and for `-`, the first word of each line on stdin.
    static func read(_ arguments: [String]) -> [String] {
        arguments.flatMap { argument -> [String] in
            guard argument == "-" else { return [argument] }
            let input = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self)
            return input.split(whereSeparator: \.isNewline).compactMap { line in
                line.split(whereSeparator: { $0 == " " || $0 == "\t" }).first.map(String.init)
            }
        }
    }
}

extension ShellSession {
    /// Runs `body` for each of `ids` in turn. An id that fails is named on stderr and the others still
    /// run; then the command ends with exit status 1.
    func forEach(_ ids: [String], _ body: (String) async throws -> Void) async throws {
        var failed = false
        for id in ids {
            do {
                try await body(id)
            } catch let error as ResponseError {
                terminal.error("\(id): \(ShellError(error).description)")
                failed = true
            } catch {
                terminal.error("\(id): \(error)")
                failed = true
            }
        }
        if failed { throw ExitCode.failure }
    }
}
