import CloudNotesProtocol
import CloudNotesTransport
import Synchronization

// MARK: - Work-done progress

/// Reports LSP `$/progress` for one long request that carried a `workDoneToken`; silent without one.
final class ProgressReporter: Sendable {
    private let token: ProgressToken?
    private let writer: MessageWriter
    private let lastPercentage = Mutex(-1)

    init(token: ProgressToken?, writer: MessageWriter) {
        self.token = token
        self.writer = writer
    }

    func begin(_ title: String) {
        send(WorkDoneProgress(kind: .begin, title: title, percentage: 0, cancellable: true))
    }

    /// Reports `done` of `total`, at most once per whole percent; the message defaults to "done of total".
    func report(_ done: Int, of total: Int, message: String? = nil) {
        let percentage = total > 0 ? min(100, done * 100 / total) : 100
        let isNew = lastPercentage.withLock { last in
            guard percentage > last else { return false }
            last = percentage
            return true
        }
        if isNew {
            send(WorkDoneProgress(kind: .report, message: message ?? "\(done) of \(total)", percentage: percentage))
        }
    }

    func end(_ message: String) {
        send(WorkDoneProgress(kind: .end, message: message))
    }

    /// Runs `work`; when it fails, ends the progress with the error's message, so no client is left
    /// with a spinner that never stops.
    func endingOnFailure<T>(_ work: () async throws(ResponseError) -> T) async throws(ResponseError) -> T {
        do {
            return try await work()
        } catch {
            end(error.message)
            throw error
        }
    }

    private func send(_ value: WorkDoneProgress) {
        guard let token else { return }
        writer.sendNotification(ProgressNotification(token: token, value: value))
    }
}
