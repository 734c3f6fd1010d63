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
        path = folder + "/memo-\(id.description.prefix(MemoTable.shortIDLength)).txt"
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw ShellError("cannot write \(path)")
        }
    }

    /// Runs `$VISUAL`, else `$EDITOR`, else `vi` on the file, and waits for it.
    ///
    /// The editor setting may carry arguments (`code --wait`), so a shell runs it, as git does; the
    /// file's path goes in as a separate argument, never spliced into the command.
    func openInEditor(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let editor = ["VISUAL", "EDITOR"].lazy.compactMap { environment[$0] }.first { !$0.isEmpty } ?? "vi"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", editor + " \"$1\"", editor, path]
        do {
            try process.run()
        } catch {
            remove()
            throw ShellError("cannot start the editor '\(editor)': \(error.localizedDescription)")
        }
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            remove()
            throw ShellError("the editor '\(editor)' failed (status \(process.terminationStatus)); the memo was not changed")
        }
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
