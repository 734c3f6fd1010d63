// MARK: - Sync errors

/// Why a sync stopped. Every message is safe to show and to log: none carries a credential.
public enum SyncError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store has no remote: `sync/configure` or `cloudnotes sync --remote URL` sets one.
    case notConfigured
    /// The remote URL cannot be used (its scheme, its form, credentials written into it).
    case badRemote(String)
    /// The remote cannot be reached or refused a request; the next sync tries again.
    case unreachable(String)
    /// The remote refused the credentials.
    case unauthorized(String)
    /// The remote holds something this version cannot read, or that fails its checks.
    case corruptRemote(String)
    /// The remote has lost what this device published before: it is empty, unmounted, or another one.
    case remoteLostHistory(String)
    /// The remote is encrypted and this store holds no key for it: a passphrase opens it.
    case passphraseRequired(String)
    /// The passphrase given does not open the encrypted remote.
    case wrongPassphrase(String)
    /// The remote is encrypted and this store syncs with it in plain text, or the reverse, or the
    /// remote's key is not the one this store holds.
    case encryptionMismatch(String)
    case cancelled

    /// The error's name, for programs (`data.reason` of the protocol's SyncFailed error).
    public var reason: String {
        switch self {
        case .notConfigured: "notConfigured"
        case .badRemote: "badRemote"
        case .unreachable: "unreachable"
        case .unauthorized: "unauthorized"
        case .corruptRemote: "corruptRemote"
        case .remoteLostHistory: "remoteLostHistory"
        case .passphraseRequired: "passphraseRequired"
        case .wrongPassphrase: "wrongPassphrase"
        case .encryptionMismatch: "encryptionMismatch"
        case .cancelled: "cancelled"
        }
    }

    public var description: String {
        switch self {
        case .notConfigured: "this store has no remote; set one with sync/configure or `cloudnotes sync --remote URL`"
        case .badRemote(let why): why
        case .unreachable(let why): why
        case .unauthorized(let why): why
        case .corruptRemote(let why): "the remote holds something unreadable: \(why); nothing of it was applied"
        case .remoteLostHistory(let why), .passphraseRequired(let why), .wrongPassphrase(let why),
             .encryptionMismatch(let why): why
        case .cancelled: "the sync was cancelled"
        }
    }
}
