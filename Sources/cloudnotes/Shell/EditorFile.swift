import CloudNotesProtocol
import Foundation

// MARK: - Editing in $EDITOR

/// A memo's text in a private temporary file, for the user's editor.
struct EditorFile {
    let path: String
    private let folder: String

    /// Writes `text` to a file only the user can read, in a folder only the user can list.
    init(text: String, id: MemoID) throws {
        let temporary = URL(fileURLWithPath: NSTemporaryDirectory(), isDirectory: true)
        var template = Array(temporary.appendingPathComponent("cloudnotes-edit-XXXXXX").path.utf8CString)
        guard let created = mkdtemp(&template) else {
            throw ShellError("cannot make a temporary folder: \(String(cString: strerror(errno)))")
        }
        folder = String(cString: created)
        path = folder + "/memo-\(id.description.prefix(ShortIDs.minimumLength)).txt"
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ShellError("cannot write \(path)")
        }
    }

    /// Runs `$VISUAL`, else `$EDITOR`, else `vi` on the file, and waits for it.
    ///
    /// The editor setting may carry arguments (`code --wait`), so a shell runs it, as git does; the
    /// file's path goes in as a separate argument, never spliced into the command. The editor is
    /// spawned in this process's group (Foundation's `Process` makes a new one, where a terminal editor
    /// is stopped by SIGTTOU), and Ctrl-C goes to it alone while this process waits.
    ///
    /// When the editor fails, the file stays if the user changed it: their text is never thrown away.
    func openInEditor(original: String, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let editor = ["VISUAL", "EDITOR"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? "vi"
        let status: Int32
        do {
            status = try Self.run(["/bin/sh", "-c", editor + " \"$1\"", editor, path])
        } catch {
            remove()
            throw ShellError("cannot start the editor '\(editor)': \(error)")
        }
        guard status == 0 else {
            if let edited = try? editedText(original: original), edited != original {
                throw ShellError("the editor '\(editor)' failed (status \(status)), so the memo was not changed; your text is in \(path)")
            }
            remove()
            throw ShellError("the editor '\(editor)' failed (status \(status)); the memo was not changed")
        }
    }

    /// Spawns `arguments` with this process's terminal, group and environment, and returns its exit
    /// status (128 + the signal when a signal ended it).
    private static func run(_ arguments: [String]) throws -> Int32 {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // The child gets the default Ctrl-C and Ctrl-\ back, whatever this process does with them.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGINT)
        sigaddset(&defaults, SIGQUIT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF))

        let previousInterrupt = signal(SIGINT, SIG_IGN)
        let previousQuit = signal(SIGQUIT, SIG_IGN)
        defer {
            signal(SIGINT, previousInterrupt)
            signal(SIGQUIT, previousQuit)
        }
        var argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], nil, &attributes, &argv, environ)
        guard spawned == 0 else { throw ShellError(String(cString: strerror(spawned))) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else { throw ShellError(String(cString: strerror(errno))) }
        }
        let signalled = status & 0x7f
        return signalled == 0 ? (status >> 8) & 0xff : 128 + signalled
    }

    /// The file's text after editing.
    ///
    /// Editors end the last line with a newline on save (Vim's 'fixeol', nano); that one newline, when
    /// the memo had none, is the editor's, not the user's, and is not kept.
    func editedText(original: String) throws -> String {
        guard var data = FileManager.default.contents(atPath: path), String(validating: data, as: UTF8.self) != nil else {
            throw ShellError("the edited file \(path) is missing or not UTF-8 text; the memo was not changed")
        }
        if original.utf8.last != 0x0A, data.last == 0x0A { data.removeLast() }
        return String(decoding: data, as: UTF8.self)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: folder)
    }
}
