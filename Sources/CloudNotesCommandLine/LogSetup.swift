import Foundation
import Logging
import Synchronization

// MARK: - Logging

/// Where the process's logs go (never stdout, which carries only protocol messages).
public enum LogSetup {
    /// Sends every log to stderr or to `file`, never to stdout, and returns the root logger.
    public static func bootstrap(level: Logger.Level, file: String?) -> Logger {
        let output: FileHandle
        if let file, let handle = FileHandle(forWritingAtPath: file) ?? create(file) {
            _ = try? handle.seekToEnd()
            output = handle
        } else {
            output = FileHandle.standardError
        }
        let sharedOutput = LogOutput(handle: output)
        LoggingSystem.bootstrap { label in
            var handler = LineLogHandler(label: label, output: sharedOutput)
            handler.logLevel = level
            return handler
        }
        return Logger(label: "cloudnotes")
    }

    private static func create(_ path: String) -> FileHandle? {
        _ = FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
        return FileHandle(forWritingAtPath: path)
    }
}

/// A file handle written to by one log line at a time.
final class LogOutput: Sendable {
    private let handle: Mutex<FileHandle>
    init(handle: FileHandle) { self.handle = Mutex(handle) }
    func write(_ line: String) {
        handle.withLock { $0.write(Data(line.utf8)) }
    }
}

/// One line per message: time, level, label, message and metadata.
struct LineLogHandler: LogHandler {
    let label: String
    let output: LogOutput
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let details = merged.isEmpty ? "" : " " + merged.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
        let time = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        output.write("\(time) \(event.level) \(label): \(event.message)\(details)\n")
    }
}
