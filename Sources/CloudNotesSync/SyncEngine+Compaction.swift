import CloudNotesStore
import Foundation

// MARK: - Pruning and compaction

extension SyncEngine {
    /// For each device, this one's too, how many of its segments every other device says it took in,
    /// leaving out this device's own word (see `MemoStore.setSyncHorizons`): none when no other device
    /// says (a device whose files have not reached this one's view of the remote yet says nothing), and
    /// at least what its snapshot stands for.
    static func horizons(own: String, published: Int64, heads: [String: DeviceHead]) -> [String: Int64] {
        takenIn(own: own, published: published, heads: heads) { device, segments, words in
            min(max(words.min() ?? 0, heads[device]?.snapshot?.covers ?? 0), segments)
        }
    }

    /// For each device, this one's too, how many of its segments every device with a head took in,
    /// this one included (`taken`): what pruning may go up to.
    static func stable(own: String, published: Int64, heads: [String: DeviceHead], taken: [String: Int64]) -> [String: Int64] {
        takenIn(own: own, published: published, heads: heads) { device, segments, words in
            let all = device == own ? words : words + [taken[device] ?? 0]
            return min(all.min() ?? segments, segments)
        }
    }

    /// For each device, this one's too: `count` of its number of segments and of what each other
    /// device's head says it took in of them.
    private static func takenIn(own: String, published: Int64, heads: [String: DeviceHead],
                                count: (_ device: String, _ segments: Int64, _ words: [Int64]) -> Int64) -> [String: Int64] {
        var counts: [String: Int64] = [:]
        for device in Set(heads.keys).union([own]) {
            let words = heads.filter { $0.key != device }.map { $0.value.seen?[device] ?? 0 }
            counts[device] = count(device, heads[device]?.segments ?? published, words)
        }
        return counts
    }

    /// Prunes the history every device has taken in, here; then, when what this device's segments hold
    /// beyond their snapshot is worth it, writes a new snapshot of them and removes the segments it
    /// stands for (protocol/sync.md, "Compaction").
    ///
    /// A device's segments are removed only once every device with a head has taken them in: one that
    /// has been away holds them, however long, until it syncs or is forgotten. Nothing is pruned while a
    /// device this store has read has no head in its view of the remote (a synced folder that has not
    /// brought it yet), unless it was forgotten.
    func compact(heads: [String: DeviceHead], forgotten: Set<String>, taken: [String: Int64], head: inout DeviceHead,
                 into report: inout SyncReport) async throws {
        guard try store.devicesRead().allSatisfy({ heads[$0] != nil || forgotten.contains($0) }) else { return }
        let stable = Self.stable(own: head.device, published: head.segments, heads: heads, taken: taken)
        let pruned = try store.pruneRevisions(stable: stable, now: now(), memosPerPart: revisionsPerApplyPart,
                                              isCancelled: { Task.isCancelled })
        report.prunedRevisions += pruned.revisions
        let covers = stable[head.device] ?? 0
        let state = try store.syncState()
        guard covers > (head.snapshot?.covers ?? 0), state.prunedSinceSnapshot >= snapshotMinimumBytes,
              state.prunedSinceSnapshot * 2 >= (try store.snapshotBytes(covers: covers)),
              let snapshot = try await writeSnapshot(covers: covers, device: head.device)
        else { return }
        let previous = head
        head.snapshot = snapshot
        try await writeOwnHead(head)
        try await finishCompaction(state: state, head: head, replacing: previous.snapshot)
        report.compacted = true
    }

    /// Writes the snapshot of this device's segments 1...`covers`: the revisions pruning kept, in parts
    /// chained as segments are. Nil when segment `covers` is gone (a snapshot stands for it already).
    private func writeSnapshot(covers: Int64, device: String) async throws -> SnapshotRef? {
        guard let last = try await remote.read(RemoteLayout.segmentPath(device, covers)) else { return nil }
        // Parts of an attempt cut short, which no head names.
        try await remote.removeFolder(RemoteLayout.snapshotPath(device, covers: covers))
        var (part, previous, after): (Int64, String, Int64) = (0, "", 0)
        while true {
            try Task.checkCancellation()
            let next = try store.snapshotPart(covers: covers, after: after, maxBytes: Self.segmentBytes, maxRevisions: revisionsPerSegment)
            if next == nil && part > 0 { break }
            part += 1
            let bytes = try SegmentFile.encode(OutgoingSegment(number: part, revisions: next?.revisions ?? []), device: device,
                                               previous: previous, snapshot: covers)
            try await remote.write(RemoteLayout.snapshotPartPath(device, covers: covers, part: part), bytes)
            previous = SyncRules.sha256(bytes)
            guard let next else { break }
            after = next.last
        }
        return SnapshotRef(covers: covers, parts: part, last: previous, segment: SyncRules.sha256(last))
    }

    /// Once this device's head names a snapshot, removes what it supersedes (the segments it stands for
    /// and the snapshot before it), then records it. Also finishes a compaction cut short after the head
    /// was written, when `head`'s snapshot is not the one recorded.
    func finishCompaction(state: SyncState, head: DeviceHead?, replacing previous: SnapshotRef? = nil) async throws {
        guard let snapshot = head?.snapshot, let device = head?.device else { return }
        let recorded = try state.snapshot.map { try JSONDecoder().decode(SnapshotRef.self, from: Data($0.utf8)) }
        guard recorded != snapshot else { return }
        for old in [previous, recorded].compactMap({ $0 }) where old.covers != snapshot.covers {
            try await remote.removeFolder(RemoteLayout.snapshotPath(device, covers: old.covers))
        }
        for name in try await remote.list(RemoteLayout.segmentsPath(device)) {
            guard let number = RemoteLayout.segmentNumber(ofFile: name), number <= snapshot.covers else { continue }
            try await remote.removeFile("\(RemoteLayout.segmentsPath(device))/\(name)")
        }
        try store.recordSnapshot(String(decoding: try RemoteLayout.encoder.encode(snapshot), as: UTF8.self))
    }

    /// Reads the snapshot of `device` that `head` names, and applies it after `position`: the read
    /// position then stands at the last segment it stands for.
    func pullSnapshot(_ device: String, head: DeviceHead, after position: ReadPosition, into report: inout SyncReport) async throws -> ReadPosition {
        guard let snapshot = head.snapshot else { return position }
        var waiting: DecodedSegment?
        for part in 1...snapshot.parts {
            try Task.checkCancellation()
            guard let bytes = try await remote.read(RemoteLayout.snapshotPartPath(device, covers: snapshot.covers, part: part)) else {
                throw SyncError.corruptRemote("part \(part) of the snapshot \(snapshot.covers) of device \(device) is missing")
            }
            let decoded = try SegmentFile.decode(bytes, device: device, number: part, rules: rules, snapshot: snapshot.covers)
            guard decoded.previous == (waiting?.hash ?? "") else {
                throw SyncError.corruptRemote("part \(part) of the snapshot \(snapshot.covers) of device \(device) does not follow part \(part - 1)")
            }
            if let waiting { try applySnapshotPart(waiting, of: device, snapshot: snapshot, after: position, last: false, into: &report) }
            waiting = decoded
        }
        guard let waiting, waiting.hash == snapshot.last else {
            throw SyncError.corruptRemote("the snapshot \(snapshot.covers) of device \(device) does not match its head")
        }
        try applySnapshotPart(waiting, of: device, snapshot: snapshot, after: position, last: true, into: &report)
        return try store.readPosition(of: device)
    }

    private func applySnapshotPart(_ part: DecodedSegment, of device: String, snapshot: SnapshotRef, after position: ReadPosition,
                                   last: Bool, into report: inout SyncReport) throws {
        let pulled = PulledSegment(device: device, number: snapshot.covers, hash: snapshot.segment, revisions: part.revisions,
                                   follows: position.applied, advancing: last)
        guard let outcome = try store.apply(pulled, rules: rules, now: now(), revisionsPerPart: revisionsPerApplyPart,
                                            committingEveryPart: committingEveryApplyPart) else { return }
        report.changed.formUnion(outcome.changedMemos)
        report.conflicts += outcome.conflicts
    }
}
