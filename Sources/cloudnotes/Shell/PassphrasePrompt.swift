import CloudNotesCommandLine
import CloudNotesSync
import Foundation

// MARK: - Passphrases at the shell

/// Where the shell's syncs get a passphrase: `CLOUDNOTES_PASSPHRASE` (`CLOUDNOTES_NEW_PASSPHRASE` for a
/// new one), else a prompt on the terminal, never argv.
enum PassphrasePrompt {
    static let source: PassphraseSource = { purpose in
        switch purpose {
        case .unlock:
            return (EnvironmentSecrets.passphrase ?? ask("Passphrase of the encrypted remote: ")).flatMap(Passphrase.init)
        case .create:
            return (EnvironmentSecrets.passphrase ?? askTwice("Passphrase for the new encrypted remote: ")).flatMap(Passphrase.init)
        case .change:
            return (EnvironmentSecrets.newPassphrase ?? askTwice("New passphrase: ")).flatMap(Passphrase.init)
        }
    }

    /// Asks twice, for a passphrase that a typing slip must not lock out; nil when the two differ.
    private static func askTwice(_ prompt: String) -> String? {
        guard let first = ask(prompt) else { return nil }
        guard ask("Again, to be sure: ") == first else {
            FileHandle.standardError.write(Data("cloudnotes: the two passphrases differ\n".utf8))
            return nil
        }
        return first
    }

    /// A line typed on the terminal with its echo off; nil when stdin is not a terminal (a script, a
    /// pipe: they give the passphrase in the environment) or nothing was typed.
    private static func ask(_ prompt: String) -> String? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { return nil }
        defer { close(tty) }
        var saved = termios()
        guard tcgetattr(tty, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        guard tcsetattr(tty, TCSAFLUSH, &quiet) == 0 else { return nil }
        defer {
            tcsetattr(tty, TCSAFLUSH, &saved)
            _ = write(tty, "\n", 1)
        }
        _ = prompt.withCString { write(tty, $0, strlen($0)) }
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while read(tty, &byte, 1) == 1, byte != UInt8(ascii: "\n") { line.append(byte) }
        if line.last == UInt8(ascii: "\r") { line.removeLast() }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }
}
