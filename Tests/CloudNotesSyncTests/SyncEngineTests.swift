import CloudNotesTestSupport
import Foundation
import GRDB
import Testing

@testable import CloudNotesStore
@testable import CloudNotesSync

/// The rules of issue 5, each on devices that share a folder remote.
@Suite("Sync between devices")
struct SyncEngineTests {
    @Test("a memo made on one device reaches the other; an edit and a delete follow it")
    func memosTravel() async throws {
        var (a, b) = try twoDevices()
        let id = try await a.publish("groceries\nmilk\n", to: b)
        #expect(try b.memos() == [id: "groceries\nmilk\n"])
        try b.update(id, "groceries\nmilk\neggs\n")
        try await b.sync()
        try await a.sync()
        #expect(try a.memos() == [id: "groceries\nmilk\neggs\n"])
        try a.delete(id)
        try await a.sync()
        try await b.sync()
        #expect(try b.memos().isEmpty)
    }

    @Test("a cancelled sync is no failure: the last sync's time and outcome stand")
    func cancelledIsNoFailure() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote)
        try await a.publish("a memo\n")
        let before = try a.store.syncState()
        let device = a
        let outcome: (any Error)? = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            do {
                try await device.sync()
                return nil
            } catch {
                return error
            }
        }.value
        #expect(outcome as? SyncError == .cancelled)
        let after = try a.store.syncState()
        #expect(after.lastError == nil)
        #expect(after.lastSyncAt == before.lastSyncAt)
    }

    @Test("edits to different lines made apart merge, in either order of syncing")
    func concurrentEditsMerge() async throws {
        try await expectConvergence(from: "one\ntwo\nthree\nfour\nfive\n",
                                    a: { try $0.update($1, "ONE\ntwo\nthree\nfour\nfive\n") },
                                    b: { try $0.update($1, "one\ntwo\nthree\nfour\nFIVE\n") },
                                    to: "ONE\ntwo\nthree\nfour\nFIVE\n")
    }

    /// Merged as each segment arrived, `b` made a merge with `a`'s first edit and another with its
    /// second; `a`, reading those one at a time, merged them with its own head again, and so on:
    /// devices that read different parts of a publication never stopped merging each other's merges.
    @Test("a memo's revisions read in separate segments are merged once, after the last: nobody merges the merges")
    func revisionsInSeparateSegmentsMergeOnce() async throws {
        var (a, b) = try twoDevices()
        a.revisionsPerSegment = 1
        b.revisionsPerSegment = 1
        let id = try await a.publish("one\ntwo\nthree\n", to: b)
        try a.update(id, "ONE\ntwo\nthree\n")
        _ = try a.store.packLocalChanges(rules: SyncRules())
        try a.update(id, "ONE\nTWO\nthree\n")
        try b.update(id, "one\ntwo\nthree\nfour\n")
        #expect(try await a.sync().publishedRevisions == 2, "two segments")
        #expect(try await b.sync().publishedRevisions == 2, "b's edit and one merge, with a's second edit")
        #expect(try b.memos() == [id: "ONE\nTWO\nthree\nfour\n"])
        // a reads b's edit, then b's merge: the merge follows everything a has, nothing is left to merge.
        #expect(try await a.sync().publishedRevisions == 0)
        #expect(try a.memos() == b.memos())
        #expect(try await b.sync().publishedRevisions == 0)
    }

    @Test("applying a segment leaves a memo edited on both sides as it is; the merge step merges it, and a cancelled one leaves it waiting")
    func applyingLeavesMergesForTheEnd() async throws {
        var (a, b) = try twoDevices()
        let id = try a.create("one\ntwo\nthree\n")
        let untouched = try await a.publish("untouched\n", to: b)
        try a.update(id, "ONE\ntwo\nthree\n")
        try a.update(untouched, "touched on a\n")
        _ = try a.store.packLocalChanges(rules: SyncRules())
        let segment = try #require(try a.store.segmentToPublish(maxBytes: 1 << 20, maxRevisions: 1000))
        try b.update(id, "one\ntwo\nthree\nfour\n")
        let pulled = PulledSegment(device: try a.store.syncState().device, number: segment.number, hash: "hash",
                                   revisions: segment.revisions)
        let applied = try #require(try b.store.apply(pulled, rules: SyncRules(), now: 42))
        #expect(applied.changedMemos == [try b.localID(of: untouched)], "moved forward at once")
        #expect(try b.memos()[id] == "one\ntwo\nthree\nfour\n", "the merge waits")
        #expect(throws: StoreError.cancelled) {
            _ = try b.store.mergeWaitingMemos(rules: SyncRules(), now: 42, isCancelled: { true })
        }
        #expect(try b.memos()[id] == "one\ntwo\nthree\nfour\n")
        let merged = try b.store.mergeWaitingMemos(rules: SyncRules(), now: 42, memosPerPart: 1)
        #expect(merged.changedMemos == [try b.localID(of: id)])
        #expect(try b.memos()[id] == "ONE\ntwo\nthree\nfour\n")
        #expect(try await b.store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM waitingMemo") } == 0,
                "nothing waits any more")
        #expect(try b.store.mergeWaitingMemos(rules: SyncRules(), now: 42).changedMemos.isEmpty)
    }

    /// Also with `a` applying one memo per transaction: the merge it receives and its conflict copy are
    /// then applied apart, and the conflict is listed once both are there.
    @Test("overlapping edits keep both versions: the later in the memo, the other in a conflict copy",
          arguments: [nil, 1] as [Int?])
    func conflictKeepsBoth(revisionsPerApplyPart: Int?) async throws {
        var (a, b) = try twoDevices()
        a.revisionsPerApplyPart = revisionsPerApplyPart
        let id = try await a.publish("title\nbody\n", to: b)
        try a.update(id, "title\nbody from a\n")
        b.clock += 10  // b's edit is the later one
        try b.update(id, "title\nbody from b\n")
        try await a.sync()
        let report = try await b.sync()
        try await a.sync()
        #expect(report.conflicts == 1)
        let memos = try b.memos()
        #expect(memos.count == 2)
        #expect(memos[id] == "title\nbody from b\n")
        let copy = try #require(memos.first { $0.key != id })
        #expect(copy.value == SyncRules.conflictCopyPrefix + "title\nbody from a\n")
        #expect(try a.memos() == memos)
        #expect(try b.store.openConflicts().map(\.copy) == [copy.key])
        #expect(try a.store.openConflicts().map(\.copy) == [copy.key], "the device that received the merge lists it too")
    }

    /// Three devices on one remote, after `a` and `b` edited the first body line of one memo (`a` later)
    /// and `a` merged `b`'s edit: `b`'s text is in a conflict copy, which `a` lists. `c` has not synced.
    struct ConflictMergedOnA {
        var remote: FolderRemote
        var a: Device, b: Device, c: Device
        var memo: String
        var conflicts: [String: String]
        /// The remote as it was before `a` merged: `b`'s edit published, `a`'s not.
        var beforeMerge: FolderRemote

        init(lines: [String]) async throws {
            remote = try newFolderRemote()
            a = try Device(remote: remote)
            b = try Device(remote: remote)
            c = try Device(remote: remote)
            memo = try await a.publish((["title", "body"] + lines).joined(separator: "\n"), to: b)
            try b.update(memo, (["title", "body from b"] + lines).joined(separator: "\n"))
            a.clock += 10  // a's edit is the later one: b's text goes to the conflict copy
            try a.update(memo, (["title", "body from a"] + lines).joined(separator: "\n"))
            try await b.sync()
            beforeMerge = try copyOf(remote)
            try await a.sync()  // the conflict: a copy of b's text, then the merge
            conflicts = try a.openConflicts()
            try #require(conflicts.count == 1)
        }

        /// The remote without `device`'s files, or with them as `earlier` held them.
        func lagging(_ device: Device, earlier: FolderRemote? = nil) throws -> LaggingRemote {
            LaggingRemote(inner: remote, device: try device.store.syncState().device, earlier: earlier)
        }
    }

    @Test("a merge that arrives before a revision it merges lists its conflict once that revision arrives")
    func conflictListedWhenMergeArrivesFirst() async throws {
        let setup = try await ConflictMergedOnA(lines: [""])
        let c = setup.c
        // c reads a's merge while b's edit, the text that lost, has not reached c yet.
        try await c.sync(through: try setup.lagging(setup.b))
        #expect(try c.openConflicts().isEmpty, "a merge whose losing text is unknown cannot be told from a clean one")
        try await c.sync()
        #expect(try c.memos() == setup.a.memos())
        #expect(try c.openConflicts() == setup.conflicts)
    }

    @Test("a merge's conflict is listed when its losing revision arrives, even while the memo still waits for another")
    func conflictListedWhileMemoStillWaits() async throws {
        var setup = try await ConflictMergedOnA(lines: ["middle", "more", "end", ""])
        let c = setup.c
        // b edits on from its first edit, unaware of a's merge; a merges that too.
        try setup.b.update(setup.memo, "title\nbody from b\nmiddle\nmore\nend from b\n")
        try await setup.b.sync(through: try setup.lagging(setup.a))
        try await setup.a.sync()

        try await c.sync(through: try setup.lagging(setup.b))
        #expect(try c.openConflicts().isEmpty, "both merges wait for b's revisions")
        try await c.sync(through: try setup.lagging(setup.b, earlier: setup.beforeMerge))
        #expect(try c.openConflicts() == setup.conflicts, "the first merge's losing text is here, while the second merge still waits")
        try await c.sync()
        #expect(try c.memos() == setup.a.memos())
        #expect(try c.openConflicts() == setup.conflicts)
    }

    @Test("open conflicts are read from the conflicts, each memo looked up by id, not from a scan of every memo")
    func openConflictsReadNoScan() throws {
        let store = try MemoStore(path: Device.newStorePath())
        let plan = try store.writer.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + MemoStore.openConflictsQuery).map { $0["detail"] as String }
        }
        #expect(plan.first?.hasPrefix("SCAN c") == true, "\(plan)")
        #expect(plan.contains { $0.hasPrefix("SEARCH m USING INDEX") }, "\(plan)")
    }

    @Test("three devices editing one line: the latest text stays, each other text gets one copy, in every sync order")
    func threeWayConflict() async throws {
        // Device and revision ids are random, and they decide which merges meet which: many rounds.
        for order in Array(repeating: [[0, 1, 2], [2, 1, 0], [1, 0, 2], [0, 2, 1]], count: 10).joined() {
            let remote = try newFolderRemote()
            var devices = try (0..<3).map { _ in try Device(remote: remote) }
            let id = try devices[0].create("Plan\nX\nend")
            for device in devices { try await device.sync() }
            for (index, text) in ["A2", "B2", "C2"].enumerated() {
                devices[index].clock += Int64(10 * index)  // C's edit is the latest
                try devices[index].update(id, "Plan\n\(text)\nend")
            }
            for _ in 0..<3 {
                for index in order { try await devices[index].sync() }
            }
            let memos = try devices[0].memos()
            #expect(memos[id] == "Plan\nC2\nend", "order \(order)")
            let copies = memos.filter { $0.key != id }.values.sorted()
            #expect(copies == ["Conflict copy: Plan\nA2\nend", "Conflict copy: Plan\nB2\nend"], "order \(order)")
            for device in devices.dropFirst() { #expect(try device.memos() == memos, "order \(order)") }
        }
    }

    @Test("a delete never beats an edit it did not see, whichever syncs first")
    func editBeatsUnseenDelete() async throws {
        try await expectConvergence(from: "keep me\n", a: { try $0.delete($1) }, b: { try $0.update($1, "keep me\nedited\n") },
                                    to: "keep me\nedited\n")
    }

    @Test("an empty or replaced remote deletes nothing, and the sync says why it stopped")
    func emptyRemoteDeletesNothing() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote)
        let id = try await a.publish("precious\n")
        // The folder is now another one: empty (an unmounted share, a wrong path).
        let other = try newFolderRemote()
        await #expect(throws: SyncError.self) { try await a.sync(through: other) }
        #expect(try a.memos() == [id: "precious\n"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: other.root).isEmpty, "nothing was written there")
        #expect(try a.store.syncState().lastError?.contains("does not hold") == true)
        // Publishing anew there is a deliberate step.
        try a.store.setRemote(other.displayURL, republish: true)
        try await a.sync(through: other)
        let b = try Device(remote: other)
        try await b.sync()
        #expect(try b.memos() == [id: "precious\n"])
        _ = b.clock
    }

    @Test("a store file copied to a second machine takes a new device id, and both devices' edits travel")
    func copiedStoreTakesNewDevice() async throws {
        let remote = try newFolderRemote()
        let path = Device.newStorePath()
        var a = try Device(remote: remote, path: path)
        let id = try await a.publish("shared\n")
        let copyPath = Device.newStorePath()
        try createFolder(of: copyPath)
        a.store.checkpoint()
        try FileManager.default.copyItem(atPath: path, toPath: copyPath)
        var b = try Device(remote: remote, path: copyPath)
        #expect(try a.store.syncState().device == b.store.syncState().device)
        let fromA = try a.create("from a\n")
        let fromB = try b.create("from b\n")
        try await a.sync()
        try await b.sync()
        try await a.sync()
        #expect(try a.store.syncState().device != b.store.syncState().device)
        #expect(try a.memos() == [id: "shared\n", fromA: "from a\n", fromB: "from b\n"])
        #expect(try b.memos() == a.memos())
    }

    @Test("a damaged segment is never applied, and the sync says so")
    func damagedSegmentRefused() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote), b = try Device(remote: remote)
        try await a.publish("first\n")
        let device = try a.store.syncState().device
        let segment = remote.root + "/" + RemoteLayout.segmentPath(device, 1)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: segment))
        bytes[bytes.count - 5] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: segment))
        await #expect(throws: SyncError.self) { try await b.sync() }
        #expect(try b.memos().isEmpty)
        _ = b.clock
    }
}

/// A remote that serves an old copy of one file: another device's head read before its last publication.
struct StaleFileRemote: RemoteInFront {
    let inner: any Remote
    let path: String
    let staleBytes: Data

    func read(_ path: String) async throws -> Data? { path == self.path ? staleBytes : try await inner.read(path) }
}

@Suite("Sync with parents published elsewhere")
struct WaitingRevisionTests {
    @Test("a merge whose parent this device has not read yet waits for it, then applies")
    func mergeWaitsForItsParent() async throws {
        let setup = try await MergeAheadOfItsParent()
        try await setup.c.sync(through: setup.staleView)
        #expect(try setup.c.memos() == [setup.id: "1\n2\nthree\n"], "b's own edit applies; the merge waits for a's")
        try await setup.c.sync()
        #expect(try setup.c.memos() == [setup.id: "one\n2\nthree\n"])
    }
}

/// Devices a, b and c with a memo: a edits it, b edits it too and publishes its merge of both; c's view
/// of the remote (`staleView`) still has a's head from before a's edit (a slow folder sync, a stale
/// cache), so that c reads b's merge before a's edit, one of its parents.
struct MergeAheadOfItsParent {
    let remote: FolderRemote
    var a: Device, b: Device, c: Device
    let id: String
    let staleView: StaleFileRemote

    init() async throws {
        remote = try newFolderRemote()
        a = try Device(remote: remote)
        b = try Device(remote: remote)
        c = try Device(remote: remote)
        id = try await a.publish("1\n2\n3\n", to: b, c)
        let headPath = RemoteLayout.headPath(try a.id)
        staleView = StaleFileRemote(inner: remote, path: headPath, staleBytes: try #require(try await remote.read(headPath)))
        try a.update(id, "one\n2\n3\n")
        try await a.sync()
        try b.update(id, "1\n2\nthree\n")
        try await b.sync()
    }
}

@Suite("Sync alongside other work")
struct SyncAlongsideTests {
    @Test("sync's own connection leaves an import of its own process alone")
    func importUnderWaySurvivesSyncConnection() throws {
        let path = Device.newStorePath()
        let store = try MemoStore(path: path)
        let session = try ImportSession(store: store)
        try session.add([MemoStore.NewMemo(text: "imported", modifiedAt: 1)])
        _ = try MemoStore(path: path, discardingAbandonedImports: false)
        try session.finish()
        #expect(try store.count(filter: nil) == 1)
    }

    @Test("a segment is not recorded as published once the remote changed under the sync")
    func publishingStopsWhenTheRemoteChanges() throws {
        let store = try MemoStore(path: Device.newStorePath())
        try store.setRemote("file:///first")
        _ = try store.create(text: "memo", now: 1, filter: nil)
        _ = try store.packLocalChanges(rules: SyncRules())
        let segment = try #require(try store.segmentToPublish(maxBytes: 1 << 20, maxRevisions: 1000))
        try store.setRemote("file:///second")
        #expect(try !store.markPublished(number: segment.number, hash: "h", remote: "file:///first"))
        #expect(try store.syncState().published == 0)
    }

    @Test("a device whose files are damaged stops only its own reading: the others arrive, this one's edits go out")
    func oneDamagedDeviceStopsNoOne() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote), b = try Device(remote: remote), c = try Device(remote: remote)
        _ = try a.create("from a\n")
        let fromB = try b.create("from b\n")
        try await a.sync()
        try await b.sync()
        let segment = remote.root + "/" + RemoteLayout.segmentPath(try a.store.syncState().device, 1)
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: segment))
        let fromC = try c.create("from c\n")
        await #expect(throws: SyncError.self) { try await c.sync() }
        #expect(try c.memos() == [fromB: "from b\n", fromC: "from c\n"])
        try await b.sync()
        #expect(try b.memos()[fromC] == "from c\n", "c published despite a's damaged segment")
    }
}
