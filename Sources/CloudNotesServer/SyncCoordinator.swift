import CloudNotesProtocol
import CloudNotesStore
import CloudNotesSync
import CloudNotesTransport
import Foundation
import Logging
import Synchronization

// MARK: - Sync in the server

/// When the server syncs (at start, a few seconds after edits settle, every `interval`, and on
/// `sync/now`), and what it tells the client about it (`sync/didChange`).
///
/// Syncs run beside the requests, never in front of them: sync writes through its own connection to
/// the store, in short transactions, and the split view learns of what it changed as of any other
/// process's change (rule C5), between two requests.
actor SyncCoordinator {
    /// The server's own connection, for reading the sync state.
    private let store: MemoStore
    private let service: SyncService
    private let writer: MessageWriter
    private let logger: Logger
    private let environment: [String: String]
    private(set) var interval: Duration
    private let settleDelay: Duration
    private let bulkWork: BulkWork

    /// Sync's own connection, opened at the first sync.
    private var syncStore: MemoStore?
    /// Syncs under way, running or waiting for their turn.
    private var running = 0
    /// When the latest sync was asked for: an automatic sync asked for before then is done by it,
    /// since that sync reads the store only after it was asked for.
    private var latestAsk: ContinuousClock.Instant?
    /// Whether a sync holds the turn.
    private var turnTaken = false
    /// The syncs waiting for their turn, first asked first.
    private var waitingForTurn: [(id: UInt64, resume: CheckedContinuation<Void, any Error>)] = []
    private var nextWaiter: UInt64 = 0
    /// The `sync/now` requests waiting or running: every sync's progress goes to them, so one that
    /// waits behind the server's own sync shows that sync's progress.
    private let listeners = ProgressListeners()
    /// Whether the store has a remote, as last read here. Read without a hop to this actor by every
    /// edit request (`mayNeedSync`), so that a store that does not sync pays nothing per keystroke.
    private nonisolated let hasRemote = Atomic<Bool>(false)
    /// The wait before the next automatic sync; a new edit restarts it. Never a running sync: edits
    /// during a long sync must not cancel it.
    private var pendingWait: Task<Void, Never>?
    private var periodic: Task<Void, Never>?
    /// The passphrase `sync/configure` gave, held in memory until a sync has made or opened the remote's
    /// key with it (the store keeps the key), or found it wrong, or the remote changes.
    private var passphrase: Passphrase?

    init(store: MemoStore, writer: MessageWriter, settings: SyncSettings,
         bulkWork: BulkWork, logger: Logger, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.bulkWork = bulkWork
        self.store = store
        service = SyncService(store: store, environment: environment)
        self.writer = writer
        self.interval = settings.interval
        self.settleDelay = settings.settleDelay
        self.logger = logger
        self.environment = environment
    }

    // MARK: Requests

    func configure(_ request: SyncConfigureRequest) async throws(ResponseError) -> SyncStatus {
        var normalized: String?
        if let text = request.passphrase, Passphrase(text) == nil {
            throw .invalidParams(param: "passphrase", "an empty passphrase would protect nothing")
        }
        if request.passphrase != nil || request.encrypt == true, request.remote == nil {
            throw .invalidParams(param: "remote", "an encrypted remote needs a remote")
        }
        if let remote = request.remote {
            guard store.path != nil else { throw .storeUnavailable("a store in memory cannot sync") }
            do {
                normalized = try service.checkedRemote(remote)
            } catch SyncError.badRemote(let problem) {
                throw .invalidParams(param: "remote", SyncError.badRemote(problem).description)
            } catch {
                let error = SyncEngine.syncError(error)
                throw .syncFailed(error.description, reason: error.reason)
            }
        }
        if let seconds = request.intervalSeconds { interval = .seconds(seconds) }
        do {
            try store.setRemote(normalized, republish: request.republish ?? false,
                                encrypt: normalized == nil ? nil : request.encrypt ?? false)
        } catch {
            throw .storeUnavailable("\(error)")
        }
        passphrase = request.passphrase.flatMap(Passphrase.init)
        hasRemote.store(normalized != nil, ordering: .relaxed)
        restartPeriodic()
        if normalized != nil { scheduleSync(after: .zero) } else { pendingWait?.cancel() }
        let status = try status()
        writer.sendNotification(SyncDidChange(status: status))
        return status
    }

    /// Syncs now, or right after the sync under way.
    func syncNow(progress: ProgressReporter) async throws(ResponseError) -> SyncResult {
        pendingWait?.cancel()  // this sync does what the automatic one was waiting to do
        progress.begin("Syncing")
        listeners.add(progress)
        defer { listeners.remove(progress) }
        do throws(ResponseError) {
            let report = try await runSync()
            progress.end("Synced: \(report.changedMemos) memos changed here, \(report.publishedRevisions) changes published")
            return SyncResult(changedMemos: report.changedMemos, conflicts: report.conflicts,
                              published: report.publishedRevisions, requests: report.requests, status: try status())
        } catch {
            // No client is left with a spinner that never stops.
            progress.end(error.message)
            throw error
        }
    }

    func status() throws(ResponseError) -> SyncStatus {
        do {
            return try service.status(syncing: running > 0, interval: interval)
        } catch {
            throw .storeUnavailable("\(error)")
        }
    }

    // MARK: Automatic syncs

    /// Starts syncing on its own: now, then every `interval`.
    func start() {
        let configured = (try? store.syncState().remote) != nil
        hasRemote.store(configured, ordering: .relaxed)
        guard configured else { return }
        scheduleSync(after: .zero)
        restartPeriodic()
    }

    /// Whether an edit here calls for a sync (the store has a remote); cheap, and no hop.
    nonisolated var mayNeedSync: Bool { hasRemote.load(ordering: .relaxed) }

    /// A memo changed here: sync once edits have settled for `settleDelay`.
    func noteLocalEdit() {
        guard mayNeedSync else { return }
        scheduleSync(after: settleDelay)
    }

    func stop() {
        pendingWait?.cancel()
        periodic?.cancel()
    }

    private func scheduleSync(after delay: Duration) {
        pendingWait?.cancel()
        let askedAt = ContinuousClock.now
        pendingWait = Task { [weak self] in
            if delay > .zero { try? await Task.sleep(for: delay) }
            guard !Task.isCancelled, let self else { return }
            await self.startAutomaticSync(askedAt: askedAt)
        }
    }

    /// Starts a sync in a task of its own, which nothing cancels: the next edit's wait must not.
    private func startAutomaticSync(askedAt: ContinuousClock.Instant) {
        Task { [weak self] in _ = try? await self?.runAutomaticSync(askedAt: askedAt) }
    }

    /// Runs the sync asked for at `askedAt`, unless one that began since (a `sync/now`) does its work:
    /// a second sync right behind it would find nothing to do, and show the client a sync that
    /// never seems to end.
    private func runAutomaticSync(askedAt: ContinuousClock.Instant) async throws(ResponseError) {
        if let latestAsk, latestAsk > askedAt { return }
        _ = try await runSync()
    }

    private func restartPeriodic() {
        periodic?.cancel()
        guard interval > .zero else { return }
        let interval = interval
        periodic = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                await self.startAutomaticSync(askedAt: .now)
            }
        }
    }

    // MARK: Running one

    private func runSync() async throws(ResponseError) -> SyncReport {
        running += 1
        latestAsk = .now
        notifyStatus()
        defer {
            running -= 1
            notifyStatus()
        }
        do {
            try await takeTurn()
            defer { passTurn() }
            let listeners = listeners
            var engine = try makeEngine()
            let passphrase = passphrase
            engine.passphrase = { _ in passphrase }
            let report = try await bulkWork.run { try await engine.sync { step in listeners.report(step) } }
            dropPassphraseOnceUsed(failure: nil)
            return report
        } catch {
            let error = SyncEngine.syncError(error)
            dropPassphraseOnceUsed(failure: error)
            if error == .cancelled { throw .cancelled }
            throw .syncFailed(error.description, reason: error.reason)
        }
    }

    /// Forgets the passphrase once a sync succeeded or the store holds the remote's key. A wrong one is
    /// kept, so that every sync says so until `sync/configure` gives another.
    private func dropPassphraseOnceUsed(failure: SyncError?) {
        if failure == nil || (try? store.syncState().holdsKey) == true { passphrase = nil }
    }

    // MARK: Taking turns

    /// Waits until the syncs asked for before this one have ended. The store's sync lock alone keeps
    /// syncs apart but lets a later one overtake, and a `sync/now` answered before the sync ahead of
    /// it ended would tell the client that sync is still going.
    private func takeTurn() async throws {
        guard turnTaken else {
            turnTaken = true
            return
        }
        let id = nextWaiter
        nextWaiter += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (resume: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    resume.resume(throwing: SyncError.cancelled)
                } else {
                    waitingForTurn.append((id, resume))
                }
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    /// Hands the turn to the sync that has waited longest.
    private func passTurn() {
        if waitingForTurn.isEmpty {
            turnTaken = false
        } else {
            waitingForTurn.removeFirst().resume.resume()
        }
    }

    private func stopWaiting(_ id: UInt64) {
        guard let index = waitingForTurn.firstIndex(where: { $0.id == id }) else { return }
        waitingForTurn.remove(at: index).resume.resume(throwing: SyncError.cancelled)
    }

    /// The engine for the store's remote, on sync's own connection. A remote that cannot even be
    /// opened (a folder gone, an unmounted share) is a failed sync too, and recorded as one.
    private func makeEngine() throws -> SyncEngine {
        guard store.path != nil, try store.syncState().remote != nil else { throw SyncError.notConfigured }
        do {
            if syncStore == nil {
                syncStore = try MemoStore(besides: store)
            }
            guard let syncStore else { throw SyncError.notConfigured }
            return try service.engine(for: syncStore, logger: logger)
        } catch {
            logger.warning("sync failed", metadata: ["error": "\(SyncEngine.syncError(error))"])
            throw error
        }
    }

    private func notifyStatus() {
        if let status = try? status() { writer.sendNotification(SyncDidChange(status: status)) }
    }
}

/// The progress reporters of the `sync/now` requests under way.
final class ProgressListeners: Sendable {
    private let reporters = Mutex<[ProgressReporter]>([])

    func add(_ reporter: ProgressReporter) { reporters.withLock { $0.append(reporter) } }
    func remove(_ reporter: ProgressReporter) { reporters.withLock { $0.removeAll { $0 === reporter } } }

    func report(_ step: SyncProgress) {
        for reporter in reporters.withLock({ $0 }) {
            reporter.report(step.percentage ?? 0, of: 100, message: step.message)
        }
    }
}

/// When the server syncs on its own.
public struct SyncSettings: Sendable {
    /// Between two periodic syncs; zero for none.
    public var interval: Duration
    /// How long edits must have settled before the sync they cause.
    public var settleDelay: Duration

    public static let standard = SyncSettings(interval: .seconds(300), settleDelay: .seconds(3))

    public init(interval: Duration, settleDelay: Duration) {
        self.interval = interval
        self.settleDelay = settleDelay
    }
}

