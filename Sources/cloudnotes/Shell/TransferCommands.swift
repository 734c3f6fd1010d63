import ArgumentParser
import CloudNotesCommandLine
import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesTransfer
import Foundation
import Synchronization

// MARK: - import

struct Import: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import memos from a JSON file in the original app's format; all or nothing.",
        discussion: "Ctrl-C cancels the import and leaves the store as it was.")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The JSON file, taken literally; - reads stdin.", valueName: "file"), completion: .file(extensions: ["json"]))
    var file: String

    @Flag(name: .long, help: "Print {\"imported\": n} as JSON.")
    var json = false

    func run(in session: ShellSession) async throws {
        let bar = ProgressBar(label: "Importing", terminal: session.terminal)
        let interruption = Interruption()
        let imported = try MemoImporter(store: session.store).run(
            ImportRequest(path: file == "-" ? "/dev/stdin" : file), isCancelled: interruption.happened,
            progress: { done, total, message in bar.update(done: done, total: total, detail: message) })
        bar.finish()
        if json {
            try session.terminal.printJSON(ImportResult(imported: imported))
        } else {
            session.terminal.note("Imported \(imported) memo\(imported == 1 ? "" : "s").")
        }
    }
}

// MARK: - export

struct Export: ReadingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Export every memo to a JSON file (- for stdout), or to a new folder of Markdown files.",
        discussion: "An existing file or folder is never replaced unless --overwrite is given.")

    @OptionGroup var options: StoreOptions

    @Argument(help: ArgumentHelp("The file (json; - for stdout) or folder (markdown) to write, taken literally.", valueName: "path"),
              completion: .file())
    var path: String

    @Option(name: .long, help: "json (one file, re-importable) or markdown (a folder, a file per memo).")
    var format: ExportFormat = .json

    @Flag(name: .long, help: "Replace an existing file, or write into an existing folder.")
    var overwrite = false

    @Flag(name: .long, help: "Print {\"exported\": n, \"path\": p} as JSON.")
    var json = false

    func validate() throws {
        if path == "-", format == .markdown { throw ValidationError("a Markdown export is a folder of files; - (stdout) takes --format json") }
        if path == "-", json { throw ValidationError("--json and - cannot go together: - writes the export's JSON itself") }
    }

    func run(in session: ShellSession) async throws {
        let bar = ProgressBar(label: "Exporting", terminal: session.terminal)
        let interruption = Interruption()
        if path == "-" {
            let exported = try MemoExporter(store: session.store).writeJSON(
                isCancelled: interruption.happened, progress: { done, total in bar.update(done: done, total: total, detail: "\(done) of \(total)") },
                to: { FileHandle.standardOutput.write(Data($0)) })
            bar.finish()
            FileHandle.standardOutput.write(Data("\n".utf8))
            return session.terminal.note("Exported \(exported) memo\(exported == 1 ? "" : "s").")
        }
        let result: ExportResult
        do {
            result = try MemoExporter(store: session.store).export(
                ExportRequest(path: path, format: format, overwrite: overwrite), isCancelled: interruption.happened,
                progress: { done, total in bar.update(done: done, total: total, detail: "\(done) of \(total)") })
        } catch {
            bar.finish()
            // The protocol's advice names its param; a person at the shell needs the flag.
            throw ShellError(ShellError(error).description.replacingOccurrences(of: "pass overwrite: true", with: "use --overwrite"))
        }
        bar.finish()
        if json {
            try session.terminal.printJSON(result)
        } else {
            session.terminal.note("Exported \(result.exported) memo\(result.exported == 1 ? "" : "s") to \(result.path).")
        }
    }
}

extension ExportFormat: ExpressibleByArgument {}

// MARK: - Ctrl-C

/// Turns Ctrl-C into a cancellation the import or export sees between two chunks, so that it
/// stops cleanly and leaves nothing half done.
// The signal source is set up in `init` and never touched again; the flag is atomic.
final class Interruption: @unchecked Sendable {
    private let flag = Atomic<Bool>(false)
    private let source: any DispatchSourceSignal

    init() {
        signal(SIGINT, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        source.setEventHandler { [weak self] in self?.flag.store(true, ordering: .relaxed) }
        source.resume()
    }

    @Sendable func happened() -> Bool { flag.load(ordering: .relaxed) }
}
