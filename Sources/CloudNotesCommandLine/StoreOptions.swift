import ArgumentParser
import CloudNotesStore
import Foundation
import Logging

// MARK: - Options the commands share

/// Options every subcommand that opens the store shares.
public struct StoreOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "The store file (default: $CLOUDNOTES_STORE, else $XDG_DATA_HOME/cloudnotes/notes.sqlite).",
        valueName: "path"), completion: .file())
    public var store: String?

    @Option(name: .long, help: ArgumentHelp(
        "committed: a change is acknowledged once committed to the write-ahead log (survives a killed process); synced: also after fsync (survives a power cut, slower).",
        valueName: "mode"))
    public var durability: MemoStore.Durability = .committed

    public init() {}

    /// The store path from the flag, the environment or the XDG default, in that order.
    public var storePath: String { Self.storeLocation(flag: store).path }

    /// The store path, and whether the user named it (with `--store` or `CLOUDNOTES_STORE`) rather
    /// than taking the default.
    public var storeLocation: (path: String, named: Bool) { Self.storeLocation(flag: store) }

    public static func storePath(flag: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        storeLocation(flag: flag, environment: environment).path
    }

    public static func storeLocation(flag: String?, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> (path: String, named: Bool)
    {
        if let flag { return (flag, true) }
        if let store = environment["CLOUDNOTES_STORE"], !store.isEmpty { return (store, true) }
        return (XDG.home("XDG_DATA_HOME", default: ".local/share", environment) + "/cloudnotes/notes.sqlite", false)
    }
}

/// Where the server's logs go; the shell commands write their few words to stderr themselves.
public struct LogOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error or critical.")
    public var logLevel: Logger.Level = .info

    @Option(name: .long, help: ArgumentHelp("Append logs to this file instead of stderr.", valueName: "path"), completion: .file())
    public var logFile: String?

    public init() {}
}

/// What of the history the store keeps: when a text becomes a version, and how long versions and the trash last.
public struct HistoryOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp(
        "A text that rested this long is kept as a version when it is next changed.", valueName: "seconds"))
    public var versionPause: Int = 300

    @Option(name: .long, help: ArgumentHelp(
        "Days a deleted memo stays in the trash before it is purged with its versions.", valueName: "days"))
    public var trashDays: Int = 30

    @Option(name: .long, help: ArgumentHelp(
        "Days versions are kept: all from the last 7 days, then one a day for 30 days, then one a week.",
        valueName: "days"))
    public var keepHistory: Int = 90

    public init() {}

    public func validate() throws {
        guard versionPause >= 0 else { throw ValidationError("--version-pause must be 0 or more") }
        guard trashDays >= 0 else { throw ValidationError("--trash-days must be 0 or more") }
        guard keepHistory >= 0 else { throw ValidationError("--keep-history must be 0 or more") }
    }

    public var policy: HistoryPolicy {
        var policy = HistoryPolicy()
        policy.versionPause = Int64(versionPause) * 1000
        policy.trashDays = trashDays
        policy.keepHistoryDays = keepHistory
        return policy
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
extension MemoStore.Durability: ExpressibleByArgument {}

// MARK: - Where the user's files go

/// The XDG base directories (freedesktop.org): `$XDG_…_HOME`, else its default under `$HOME`.
public enum XDG {
    public static func home(_ variable: String, default relative: String,
                            _ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let value = environment[variable] ?? ""
        // The specification ignores relative paths.
        return value.hasPrefix("/") ? value : (environment["HOME"] ?? NSHomeDirectory()) + "/" + relative
    }
}
