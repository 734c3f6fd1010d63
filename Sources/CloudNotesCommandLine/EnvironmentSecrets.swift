import Foundation

// MARK: - Secrets in the environment

/// Passphrases given in the environment, read once as the process starts and taken out of it, so that
/// no process started from this one (an editor, `cloudnotes-mcp`) inherits them.
public enum EnvironmentSecrets {
    /// `CLOUDNOTES_PASSPHRASE`: the encrypted remote's passphrase.
    public static let passphrase = take("CLOUDNOTES_PASSPHRASE")
    /// `CLOUDNOTES_NEW_PASSPHRASE`: the new one, for `cloudnotes sync --change-passphrase`.
    public static let newPassphrase = take("CLOUDNOTES_NEW_PASSPHRASE")

    /// Reads both and removes them from the environment; every executable calls it first.
    public static func takeAll() {
        _ = (passphrase, newPassphrase)
    }

    private static func take(_ name: String) -> String? {
        defer { unsetenv(name) }
        return getenv(name).map { String(cString: $0) }
    }
}
