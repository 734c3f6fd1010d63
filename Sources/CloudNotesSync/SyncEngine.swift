import CloudNotesStore
import Foundation
import Logging

// MARK: - Sync

/// How far a sync has come, for `$/progress` and the shell's progress line.
public struct SyncProgress: Sendable, Hashable {
    public var message: String
    /// 0...100 when the amount of work is known.
    public var percentage: Int?
}

/// What a sync did.
public struct SyncReport: Sendable, Hashable {
    /// Memos that changed here because of other devices' edits.
    public var changedMemos: Int { changed.count }
    var changed = ChangedMemos()
    /// Conflicts met, each kept as a conflict copy.
    public var conflicts = 0
    /// Revisions this device published.
    public var publishedRevisions = 0
    /// Requests made to the remote.
    public var requests = 0
    /// Revisions pruned from this store's sync history.
    public var prunedRevisions = 0
    /// Whether this device wrote a snapshot and removed what it stands for.
    public var compacted = false
    public init() {}
}

/// One sync of a store with its remote: publish what changed here, apply what changed elsewhere.
///
/// Every step is safe to interrupt (a crash, a cut connection, a cancel): the store and the remote
/// are consistent after each one, and the next sync carries on (see protocol/sync.md, "Writing").
/// Syncs of one store never overlap, not even from two processes: they take turns on a lock file.
public struct SyncEngine: Sendable {
    /// The store, opened for sync alone: other connections (the server's split view) see sync's
    /// changes as changes made elsewhere and announce them to their front ends.
    let store: MemoStore
    /// The remote; once `unlocked`, sealed with its data key when it is encrypted.
    var remote: any Remote
    let logger: Logger
    let now: @Sendable () -> Int64
    let rules = SyncRules()

    /// The most text, and the most revisions, in one segment (a longer memo makes a segment alone).
    static let segmentBytes = 1 << 20
    static let segmentRevisions = 1000
    /// The most revisions this engine puts in one segment: tests make segments smaller, so that what
    /// one device wrote reaches another in several steps.
    var revisionsPerSegment = segmentRevisions
    /// The parts a pulled segment is applied in (see `MemoStore.apply`): tests make them smaller, and
    /// commit each.
    var revisionsPerApplyPart = MemoStore.revisionsPerApplyPart
    var committingEveryApplyPart = false
    /// How much text must have been pruned from this device's segments since its last snapshot before
    /// it writes another (and at least half of what the snapshot would hold): tests make it 0.
    var snapshotMinimumBytes: Int64 = 1 << 20
    /// Where a passphrase comes from when an encrypted remote needs one: this store holds no key for it yet.
    public var passphrase: PassphraseSource = { _ in nil }

    public init(store: MemoStore, remote: any Remote, logger: Logger, now: @escaping @Sendable () -> Int64 = currentTime) {
        self.store = store
        self.remote = remote
        self.logger = logger
        self.now = now
    }

    /// Milliseconds since the epoch.
    @Sendable public static func currentTime() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Syncs once, and records when it ended and why it failed, if it did (a cancelled sync records nothing).
    ///
    /// With `forgetting`, the sync also forgets that device on the remote (`cloudnotes sync
    /// --forget-device`): every revision read from it is published again as this device's, every
    /// device's head lists it as forgotten from then on, and its files are removed. Devices that join
    /// later then never wait for a revision only it published.
    public func sync(forgetting: String? = nil, progress: @escaping @Sendable (SyncProgress) -> Void = { _ in }) async throws -> SyncReport {
        let lock = try await SyncLock.acquire(for: store.path)
        defer { withExtendedLifetime(lock) {} }
        let requestsBefore = remote.requestCount
        do {
            let (engine, marker) = try await unlocked()
            var report = try await engine.run(marker: marker, forgetting: forgetting, progress: progress)
            report.requests = remote.requestCount - requestsBefore
            try store.recordSyncEnd(at: now(), error: nil)
            logger.info("sync done", metadata: [
                "changed": "\(report.changedMemos)", "conflicts": "\(report.conflicts)",
                "published": "\(report.publishedRevisions)", "requests": "\(report.requests)",
            ])
            return report
        } catch {
            let error = Self.syncError(error)
            if error == .cancelled {
                // Stopped on request, not failed: what the last sync found still stands.
                logger.info("sync cancelled")
                throw error
            }
            try? store.recordSyncEnd(at: now(), error: error.description)
            logger.warning("sync failed", metadata: ["error": "\(error)"])
            throw error
        }
    }

    private func run(marker: RemoteMarker?, forgetting: String?,
                     progress: @escaping @Sendable (SyncProgress) -> Void) async throws -> SyncReport {
        // Own head first: a remote that lost this device's history must be left as it was found.
        var (state, ownHead) = try await settleOwnHead(try store.syncState())
        try await checkMarker(marker)
        try await finishCompaction(state: state, head: ownHead)
        try Task.checkCancellation()
        progress(SyncProgress(message: "Looking for changes made here", percentage: nil))
        _ = try store.packLocalChanges(rules: rules)
        var report = SyncReport()
        // Every head first: any of them may say that a device is forgotten.
        var heads: [(device: String, head: DeviceHead?)] = []
        var unreadable: [SyncError] = []
        for device in try await otherDevices(than: state.device) {
            do {
                heads.append((device, try await readHead(of: device)))
            } catch let error as SyncError where Self.concernsOneDevice(error) {
                logger.warning("cannot read a device", metadata: ["device": "\(device)", "error": "\(error)"])
                if device != forgetting { unreadable.append(error) }
            }
        }
        var forgotten = Set(ownHead?.forgotten ?? []).union(heads.flatMap { $0.head?.forgotten ?? [] })
        if let forgetting { forgotten.insert(forgetting) }
        var live: [String: DeviceHead] = [:]
        for case let (device, head?) in heads where !forgotten.contains(device) { live[device] = head }
        let horizons = Self.horizons(own: state.device, published: state.published, heads: live)
        try store.setSyncHorizons(horizons)
        // A device whose files cannot be read stops only its own reading: the others are read, and
        // this device's changes published, before the sync reports it.
        for (device, head) in heads {
            if forgotten.contains(device) && device != forgetting {
                // Its files outlived a forget cut short; its revisions were published again already.
                try? await remote.removeFolder(RemoteLayout.devicePath(device))
                continue
            }
            guard let head else { continue }
            do {
                try await pull(device, head: head, into: &report, progress: progress)
            } catch let error as SyncError where Self.concernsOneDevice(error) {
                logger.warning("cannot read a device", metadata: ["device": "\(device)", "error": "\(error)"])
                if device != forgetting { unreadable.append(error) }
            }
        }
        if forgotten.contains(state.device) {
            // Another device forgot this one while it was away: what it published is gone or about to
            // be, and the others no longer read it. It publishes everything again under a new id.
            let device = Self.newDeviceID()
            logger.notice("this device was forgotten on the remote; it publishes again under a new id",
                          metadata: ["old": "\(state.device)", "new": "\(device)"])
            try store.adoptNewDevice(device)
            (state, ownHead) = (try store.syncState(), nil)
        }
        // Merges wait until every device is read: made from part of what another device published,
        // they differ from device to device, and the devices never stop merging each other's merges.
        try Task.checkCancellation()
        progress(SyncProgress(message: "Merging edits made here and elsewhere", percentage: nil))
        let merged = try store.mergeWaitingMemos(rules: rules, now: now(), memosPerPart: revisionsPerApplyPart,
                                                 isCancelled: { Task.isCancelled })
        report.changed.formUnion(merged.changedMemos)
        report.conflicts += merged.conflicts
        if let forgetting { _ = try store.takeOverRevisions(of: forgetting) }
        // Edits made while reading, and merges, go out in this same sync.
        _ = try store.packLocalChanges(rules: rules)
        let taken = try store.takenIn()
        var head = try await publish(seen: (taken ?? ownHead?.seen ?? [:]).filter { !forgotten.contains($0.key) },
                                     forgotten: forgotten, snapshot: ownHead?.snapshot, over: ownHead,
                                     into: &report, progress: progress)
        if let forgetting { try await remote.removeFolder(RemoteLayout.devicePath(forgetting)) }
        if let first = unreadable.first { throw first }
        // Pruning needs every device's word on what it took in (an unreadable head stopped the sync
        // above), and all that this one read taken in.
        if let taken, forgetting == nil {
            try await compact(heads: live, forgotten: forgotten, taken: taken, head: &head, into: &report)
        }
        return report
    }

    /// Whether the error is about one device's files, not about the remote as a whole.
    private static func concernsOneDevice(_ error: SyncError) -> Bool {
        if case .corruptRemote = error { return true }
        return false
    }

    /// Any error met during a sync, as a `SyncError`.
    public static func syncError(_ error: any Error) -> SyncError {
        switch error {
        case let error as SyncError: error
        case is CancellationError: .cancelled
        case StoreError.cancelled: .cancelled
        default: .unreachable("the store failed during sync: \(error)")
        }
    }

    // MARK: The remote's marker

    /// Marks a new remote as a CloudNotes remote, and moves a format 1 marker on (`readMarker` read
    /// and checked `marker`).
    private func checkMarker(_ marker: RemoteMarker?) async throws {
        guard let marker else {
            try await remote.write(RemoteLayout.markerPath, try RemoteMarker.current.encoded())
            return
        }
        if marker.version < RemoteMarker.current.version {
            // Format 2 reads format 1 files as they are. The marker moves on at once, so that a device
            // still on a version that writes format 1 stops and says to upgrade, rather than misread
            // the heads written from now on.
            logger.notice("upgrading the remote's format", metadata: ["from": "\(marker.version)", "to": "\(RemoteMarker.current.version)"])
            try await remote.write(RemoteLayout.markerPath, try RemoteMarker.current.encoded())
        }
    }

    // MARK: This device's head

    /// Compares this device's head on the remote with what the store says was published, and settles
    /// the difference: a publication a crash cut short is recorded, another store publishing under
    /// this device's id makes this one take a new id, and a remote that lost this device's history
    /// stops the sync before anything is changed.
    private func settleOwnHead(_ state: SyncState) async throws -> (SyncState, DeviceHead?) {
        guard let data = try await remote.read(RemoteLayout.headPath(state.device)) else {
            guard state.published == 0 else {
                guard try await isForgotten(state.device) else { throw lostHistory(state) }
                // Its files were removed when another device forgot it; `run` gives it a new id.
                return (state, DeviceHead(device: state.device, segments: 0, last: "", forgotten: [state.device]))
            }
            return (state, nil)
        }
        let head = try DeviceHead.decode(data, device: state.device)
        if head.segments == state.published, head.last == state.publishedHash { return (state, head) }
        if head.segments < state.published { throw lostHistory(state) }
        if head.segments == state.published + 1,
           let recorded = try store.segmentToPublish(maxBytes: Self.segmentBytes, maxRevisions: revisionsPerSegment),
           recorded.number == head.segments,
           SyncRules.sha256(try SegmentFile.encode(recorded, device: state.device, previous: state.publishedHash)) == head.last {
            // The last sync published the segment and its head, then stopped before recording it.
            guard try store.markPublished(number: recorded.number, hash: head.last, remote: state.remote) else {
                throw Self.remoteChanged
            }
            return (try store.syncState(), head)
        }
        try takeNewDeviceID(from: state.device)
        return (try store.syncState(), nil)
    }

    /// Takes a new device id, when another store publishes under this one's (a copied store file).
    func takeNewDeviceID(from old: String) throws {
        let device = Self.newDeviceID()
        logger.warning("another store publishes under this store's device id (was the store file copied?); taking a new one",
                       metadata: ["old": "\(old)", "new": "\(device)"])
        try store.adoptNewDevice(device)
    }

    static let remoteChanged = SyncError.badRemote(
        "the remote or this store's device id was changed while syncing; the next sync goes on from there")

    private func lostHistory(_ state: SyncState) -> SyncError {
        .remoteLostHistory("""
            the remote \(remote.displayURL) does not hold the \(state.published) segments this store published there \
            (is it empty, unmounted, or another remote?); nothing was changed. To publish everything anew there, \
            run: cloudnotes sync --remote \(remote.displayURL) --republish
            """)
    }

    static func newDeviceID() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    // MARK: Reading other devices

    func otherDevices(than device: String) async throws -> [String] {
        try await remote.list(RemoteLayout.devicesPath).filter { RemoteLayout.isDeviceID($0) && $0 != device }.sorted()
    }

    /// The head of `device`, nil when it has none (it is publishing its first segment right now).
    func readHead(of device: String) async throws -> DeviceHead? {
        guard let data = try await remote.read(RemoteLayout.headPath(device)) else { return nil }
        return try DeviceHead.decode(data, device: device)
    }

    /// Applies the segments of `device` this store has not applied yet, in order. Each is applied only
    /// once the next one (or the head) confirms its hash, so a damaged segment is never applied.
    ///
    /// A device whose history no longer continues what was read of it has published it anew (after
    /// its remote lost it): it is read again from its first segment; what was applied already is known
    /// by its revisions' ids and changes nothing.
    private func pull(_ device: String, head: DeviceHead, into report: inout SyncReport,
                      progress: @escaping @Sendable (SyncProgress) -> Void) async throws {
        var position = try store.readPosition(of: device)
        if head.segments < position.applied || (head.segments == position.applied && head.last != position.lastHash) {
            position = try restartReading(device)
        }
        guard head.segments > position.applied else { return }
        let start = try await startingPoint(of: device, head: head, from: position, into: &report)
        if try await !pull(device, head: head, from: start, into: &report, progress: progress) {
            let again = try await startingPoint(of: device, head: head, from: try restartReading(device), into: &report)
            _ = try await pull(device, head: head, from: again, into: &report, progress: progress)
        }
    }

    /// Where reading `device` goes on from `position`: there, or, when its snapshot stands for segments
    /// after it (removed, or about to be), after the snapshot, read first.
    private func startingPoint(of device: String, head: DeviceHead, from position: ReadPosition,
                               into report: inout SyncReport) async throws -> ReadPosition {
        guard let snapshot = head.snapshot, position.applied < snapshot.covers else { return position }
        return try await pullSnapshot(device, head: head, after: position, into: &report)
    }

    private func restartReading(_ device: String) throws -> ReadPosition {
        logger.notice("a device published its history anew; reading it again", metadata: ["device": "\(device)"])
        try store.forgetReadPosition(of: device)
        return .start
    }

    /// Reads and applies segments after `position` up to the head; false when the first of them does
    /// not continue what was read (the device published its history anew).
    private func pull(_ device: String, head: DeviceHead, from position: ReadPosition, into report: inout SyncReport,
                      progress: @escaping @Sendable (SyncProgress) -> Void) async throws -> Bool {
        if position.applied == head.segments {  // a snapshot that stands for every segment
            guard position.lastHash == head.last else {
                throw SyncError.corruptRemote("the snapshot of device \(device) does not match its head")
            }
            return true
        }
        var waiting: (number: Int64, segment: DecodedSegment)?
        for number in (position.applied + 1)...head.segments {
            try Task.checkCancellation()
            guard let bytes = try await remote.read(RemoteLayout.segmentPath(device, number)) else {
                throw SyncError.corruptRemote("segment \(number) of device \(device) is missing")
            }
            let segment = try SegmentFile.decode(bytes, device: device, number: number, rules: rules)
            guard segment.previous == (waiting?.segment.hash ?? position.lastHash) else {
                if waiting == nil, position.applied > 0 { return false }
                throw SyncError.corruptRemote("segment \(number) of device \(device) does not follow segment \(number - 1)")
            }
            if let waiting { try apply(waiting.segment, number: waiting.number, of: device, into: &report) }
            waiting = (number, segment)
            let done = number - position.applied, total = head.segments - position.applied
            progress(SyncProgress(message: "Reading device \(device.prefix(8)): segment \(done) of \(total)",
                                  percentage: Int(done * 100 / max(total, 1))))
        }
        guard let waiting, waiting.segment.hash == head.last else {
            throw SyncError.corruptRemote("the last segment of device \(device) does not match its head")
        }
        try apply(waiting.segment, number: waiting.number, of: device, into: &report)
        return true
    }

    private func apply(_ segment: DecodedSegment, number: Int64, of device: String, into report: inout SyncReport) throws {
        let pulled = PulledSegment(device: device, number: number, hash: segment.hash, revisions: segment.revisions)
        guard let outcome = try store.apply(pulled, rules: rules, now: now(), revisionsPerPart: revisionsPerApplyPart,
                                                committingEveryPart: committingEveryApplyPart) else { return }
        report.changed.formUnion(outcome.changedMemos)
        report.conflicts += outcome.conflicts
    }

    // MARK: Publishing

    /// Publishes this device's unpublished revisions, then a head that says what it has taken in of the
    /// other devices (`seen`), which devices are forgotten, and its snapshot; returns the head.
    ///
    /// The heads written between segments repeat what `ownHead` said was taken in: revisions made here
    /// before this sync read anything go out in those segments, and no head may say a revision was
    /// taken in while a revision made without it is still to come (protocol/sync.md, "Pruning").
    private func publish(seen: [String: Int64], forgotten: Set<String>, snapshot: SnapshotRef?, over ownHead: DeviceHead?,
                         into report: inout SyncReport, progress: @escaping @Sendable (SyncProgress) -> Void) async throws -> DeviceHead {
        let start = try store.syncState()
        var written = ownHead
        let total = try store.unpublishedRevisionCount()
        while let segment = try store.segmentToPublish(maxBytes: Self.segmentBytes, maxRevisions: revisionsPerSegment) {
            try Task.checkCancellation()
            // Read afresh for every segment: another process may have changed the remote or the device
            // id meanwhile, and a segment must never be written from a state that is gone.
            let state = try store.syncState()
            guard state.remote == start.remote, state.device == start.device, segment.number == state.published + 1 else {
                throw Self.remoteChanged
            }
            let bytes = try SegmentFile.encode(segment, device: state.device, previous: state.publishedHash)
            let hash = SyncRules.sha256(bytes)
            try await writeSegment(bytes, number: segment.number, device: state.device)
            let head = DeviceHead(device: state.device, segments: segment.number, last: hash, seen: ownHead?.seen ?? [:],
                                  forgotten: forgotten, snapshot: snapshot)
            try await writeOwnHead(head)
            written = head
            guard try store.markPublished(number: segment.number, hash: hash, remote: state.remote) else {
                throw Self.remoteChanged
            }
            report.publishedRevisions += segment.revisions.count
            progress(SyncProgress(message: "Publishing: \(report.publishedRevisions) of \(max(total, report.publishedRevisions)) changes",
                                  percentage: min(100, report.publishedRevisions * 100 / max(total, 1))))
        }
        let state = try store.syncState()
        let head = DeviceHead(device: state.device, segments: state.published, last: state.publishedHash, seen: seen,
                              forgotten: forgotten, snapshot: snapshot)
        if head != written {
            try await writeOwnHead(head)
        }
        return head
    }
}
