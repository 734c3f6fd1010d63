import ArgumentParser
import CloudNotesCommandLine
import CloudNotesProtocol
import CloudNotesStore
import CloudNotesSync
import Foundation
import Logging

// MARK: - sync

struct Sync: ShellCommand {
    static let configuration = CommandConfiguration(
        abstract: "Sync the store with its remote: a folder (file:///path), a WebDAV collection (http(s)://…) or S3 (s3://bucket/prefix).",
        discussion: """
            `cloudnotes sync --remote URL` sets the remote and syncs; `cloudnotes sync` syncs again; \
            `cloudnotes sync --status` tells where sync stands. WebDAV credentials come from \
            CLOUDNOTES_REMOTE_USER and CLOUDNOTES_REMOTE_PASSWORD, or from a netrc file (NETRC or ~/.netrc), \
            never from the command line; S3's from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or ~/.aws \
            (AWS_PROFILE), with AWS_REGION, and AWS_ENDPOINT_URL for a service other than AWS. Ctrl-C stops the sync; the next one carries on. \
            `--encrypt` makes a new remote encrypted end to end; its passphrase, and that of an encrypted \
            remote this store joins, comes from CLOUDNOTES_PASSPHRASE or a prompt on the terminal, once: \
            the store then keeps the remote's key (the store file is made private to its owner).
            """)

    @OptionGroup var options: StoreOptions

    @Option(name: .long, help: ArgumentHelp("Set the remote, then sync.", valueName: "url"))
    var remote: String?

    @Flag(name: .long, help: "Publish everything anew, even on the same remote (after it lost this store's history).")
    var republish = false

    @Flag(name: .long, help: "Tell the remote, the last sync, what waits to be published and any conflict; do not sync.")
    var status = false

    @Flag(name: .long, help: "Make the new remote encrypted end to end (passphrase: CLOUDNOTES_PASSPHRASE or the prompt).")
    var encrypt = false

    @Flag(name: .customLong("change-passphrase"), help: ArgumentHelp(
        "Give the encrypted remote a new passphrase (CLOUDNOTES_NEW_PASSPHRASE or the prompt); do not sync."))
    var changePassphrase = false

    @Option(name: .customLong("forget-device"), help: ArgumentHelp(
        "Sync, then forget a retired device on the remote: this device publishes what it published, and removes its files.",
        valueName: "id"))
    var forgetDevice: String?

    @Flag(name: .long, help: "Print the result (or the status) as JSON.")
    var json = false

    func run(in session: ShellSession) async throws {
        let service = SyncService(store: session.store)
        if let remote {
            try session.store.setRemote(try service.checkedRemote(remote), republish: republish, encrypt: encrypt)
        } else if republish || encrypt {
            try session.store.setRemote(try session.store.syncState().remote, republish: republish, encrypt: encrypt ? true : nil)
        }
        if status {
            return try show(try service.status(), in: session)
        }
        guard let url = try session.store.syncState().remote else { throw SyncError.notConfigured }
        // The shell speaks in one sentence on success or failure, never in log lines.
        let quiet = Logger(label: "cloudnotes.sync", factory: { _ in SwiftLogNoOpLogHandler() })
        var engine = try service.engine(for: session.store, logger: quiet)
        engine.passphrase = PassphrasePrompt.source
        if changePassphrase {
            try await engine.changePassphrase()
            return session.terminal.note("The passphrase of \(url) is changed: the old one no longer opens it; devices that joined keep syncing.")
        }
        let bar = ProgressBar(label: "Syncing", terminal: session.terminal)
        let forgetting: String?
        if let forgetDevice { forgetting = try await engine.deviceToForget(forgetDevice) } else { forgetting = nil }
        let task = Task {
            try await engine.sync(forgetting: forgetting) { step in
                bar.update(done: step.percentage ?? 0, total: 100, detail: step.message)
            }
        }
        let interruption = Interruption()
        let watcher = Task {
            while !Task.isCancelled, !interruption.happened() { try? await Task.sleep(for: .milliseconds(50)) }
            task.cancel()
        }
        defer { watcher.cancel() }
        let report = try await task.value
        bar.finish()
        let status = try service.status()
        if json {
            return try session.terminal.printJSON(SyncResult(
                changedMemos: report.changedMemos, conflicts: report.conflicts, published: report.publishedRevisions,
                requests: report.requests, status: status))
        }
        session.terminal.note("""
            Synced with \(url): \(report.changedMemos) memo\(report.changedMemos == 1 ? "" : "s") changed here, \
            \(report.publishedRevisions) change\(report.publishedRevisions == 1 ? "" : "s") published\
            \(report.conflicts > 0 ? ", \(report.conflicts) conflict\(report.conflicts == 1 ? "" : "s") kept as copies" : "").
            """)
        if let forgetting {
            session.terminal.note("Forgot device \(forgetting): devices that join no longer wait for it. If it syncs again, it publishes under a new id.")
        }
        try showConflicts(status, in: session)
    }

    private func show(_ status: SyncStatus, in session: ShellSession) throws {
        if json { return try session.terminal.printJSON(status) }
        var lines = ["remote:    \(status.remote ?? "none (set one with: cloudnotes sync --remote URL)")",
                     "device:    \(status.device)",
                     "last sync: \(status.lastSync?.iso8601 ?? "never")"]
        if status.encrypted { lines.append("encrypted: yes, end to end (this store holds the key)") }
        if let error = status.lastError { lines.append("failed:    \(error)") }
        lines.append("waiting:   \(status.pendingChanges) memo\(status.pendingChanges == 1 ? "" : "s") changed here, not yet published")
        lines.append("conflicts: \(status.conflicts.count)")
        session.terminal.print(lines.joined(separator: "\n"))
        try showConflicts(status, in: session)
    }

    private func showConflicts(_ status: SyncStatus, in session: ShellSession) throws {
        for conflict in status.conflicts {
            session.terminal.note("conflict: memo \(conflict.memo) has a copy \(conflict.copy) with the other side's text; merge by hand, then delete the copy")
        }
    }
}
