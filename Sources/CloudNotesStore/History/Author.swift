import Foundation

// MARK: - Who wrote a text

/// Who wrote a memo's text: the change that replaces it keeps it as a version unless the same editing
/// session replaces it before it has rested (see `HistoryPolicy`).
public struct Author: Sendable, Hashable {
    /// Where a text came from, as `memo/history` tells it.
    public enum Kind: String, Sendable, CaseIterable {
        /// An editor's session (`serve`).
        case edit
        /// A shell command.
        case shell
        /// An import.
        case `import`
        /// Another device, through sync.
        case device
        /// A merge of concurrent changes (sync), or the copy a conflicting merge keeps.
        case merge
        /// A restore of an earlier version.
        case restore
        /// An assistant, through `cloudnotes mcp`.
        case assistant
    }

    public let kind: Kind
    /// The session (one process's store) or the device: two sessions' texts are told apart.
    public let detail: String
    /// As kept in the store, `kind:detail`: made once, since every keystroke compares and writes it.
    public let stored: String

    public init(kind: Kind, detail: String) {
        self.kind = kind
        self.detail = detail
        stored = "\(kind.rawValue):\(detail)"
    }

    /// A session of its own: a random token, new with each process.
    static func newSession(_ kind: Kind) -> Author {
        Author(kind: kind, detail: String(UInt64.random(in: 0...UInt64.max), radix: 16))
    }

    public init?(stored: String?) {
        guard let stored, let colon = stored.firstIndex(of: ":"),
              let kind = Kind(rawValue: String(stored[..<colon])) else { return nil }
        self.init(kind: kind, detail: String(stored[stored.index(after: colon)...]))
    }

    /// The device that made a text, for a text from another device.
    public var device: String? { kind == .device ? detail : nil }
}

// MARK: - The policy

/// When a text is kept as a version, how long versions are kept, and how long the trash keeps a memo.
public struct HistoryPolicy: Sendable, Hashable {
    /// A text that has rested this long (milliseconds) is kept when it is replaced, even by its own session.
    public var versionPause: Int64 = 5 * 60 * 1000
    /// Versions older than this many days are pruned; younger ones are thinned: all from the last 7
    /// days, then one a day for 30 days, then one a week.
    public var keepHistoryDays: Int = 90
    /// A deleted memo stays in the trash this many days, then its text and versions are purged.
    public var trashDays: Int = 30

    public init() {}

    public static let dayMilliseconds: Int64 = 86_400_000
}
