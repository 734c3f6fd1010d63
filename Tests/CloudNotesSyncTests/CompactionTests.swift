import Foundation
import GRDB
import Testing

@testable import CloudNotesStore
@testable import CloudNotesSync

@Suite("Pruning and compaction")
struct CompactionTests {
    /// Devices `a` and `b` on a new folder remote that write a snapshot whenever they may, and a memo
    /// that `a` then `b` edited in turns, `rounds` times each, syncing after every edit.
    struct EditedInTurns {
        let remote: FolderRemote
        var a: Device
        var b: Device
        var id = ""

        init(rounds: Int, others: [Device] = []) async throws {
            remote = try newFolderRemote()
            a = try Device(remote: remote)
            b = try Device(remote: remote)
            a.snapshotMinimumBytes = 0
            b.snapshotMinimumBytes = 0
            id = try await a.publish("0\n", to: b)
            try await edit(rounds: rounds)
        }

        mutating func edit(rounds: Int) async throws {
            for round in 1...rounds {
                try a.update(id, try a.memos()[id]! + "a\(round)\n")
                try await a.sync()
                try await b.sync()
                try b.update(id, try b.memos()[id]! + "b\(round)\n")
                try await b.sync()
                try await a.sync()
            }
        }

        /// The segment files of `device` on the remote.
        func segments(of device: Device) async throws -> [String] {
            try await remote.list(RemoteLayout.segmentsPath(try device.id)).sorted()
        }
    }

    static func revisionCount(_ device: Device) throws -> Int {
        try device.store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM revision") ?? 0 }
    }

    @Test("history every device took in is pruned; the segments it was in become a snapshot, and one that joins reads that")
    func snapshotsReplaceSegments() async throws {
        let turns = try await EditedInTurns(rounds: 6)
        let head = try await DeviceHeadTests.head(of: try turns.a.id, on: turns.remote)
        let snapshot = try #require(head.snapshot, "a wrote a snapshot")
        let left = try await turns.segments(of: turns.a)
        #expect(left.allSatisfy { (RemoteLayout.segmentNumber(ofFile: $0) ?? 0) > snapshot.covers }, "superseded segments are gone")
        #expect(try Self.revisionCount(turns.a) < 8, "24 revisions were made; the ones before what every device took in are pruned")
        let joiner = try Device(remote: turns.remote)
        try await joiner.sync()
        #expect(try joiner.memos() == turns.a.memos())
        #expect(try joiner.memos()[turns.id]!.hasSuffix("a6\nb6\n"))
        #expect(try Self.revisionCount(joiner) <= Self.revisionCount(turns.a) + 2)
        // Everyone goes on editing and merging after the compaction, the joiner too.
        var (a, b, c) = (turns.a, turns.b, joiner)
        try a.update(turns.id, "top\n" + (try a.memos()[turns.id]!))
        try c.update(turns.id, (try c.memos()[turns.id]!) + "end\n")
        try await syncInTurn([a, b, c])
        try await syncInTurn([a, b, c])
        let merged = try a.memos()[turns.id]!
        #expect(merged.hasPrefix("top\n") && merged.hasSuffix("end\n"))
        #expect(try b.memos() == a.memos() && c.memos() == a.memos())
    }

    @Test("a device away for long holds back the segments it has not taken in, and merges its edits on return")
    func anAwayDeviceIsKeptSafe() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote), away = try Device(remote: remote)
        a.snapshotMinimumBytes = 0
        let id = try await a.publish("1\n2\n3\n", to: away)
        try await away.sync()  // its head says it took in a's first segment
        for round in 1...8 {
            try a.update(id, "1\n2\n3\n" + (1...round).map { "a\($0)\n" }.joined())
            try await a.sync()
        }
        let segments = try await remote.list(RemoteLayout.segmentsPath(try a.id))
        #expect(segments.count == 9, "nothing the away device has not taken in is removed")
        try away.update(id, "one\n2\n3\n")
        try await away.sync()
        try await a.sync()
        try await away.sync()
        #expect(try a.memos()[id] == "one\n2\n3\n" + (1...8).map { "a\($0)\n" }.joined())
        #expect(try away.memos() == a.memos())
        try a.update(id, try a.memos()[id]! + "later\n")
        try await a.sync()
        try await away.sync()
        try await a.sync()
        let after = try await DeviceHeadTests.head(of: try a.id, on: remote)
        #expect(after.snapshot != nil, "once it took everything in, a compacts")
    }

    @Test("nothing is pruned while a device this store has read has no head in its view of the remote")
    func noPruningWhileAHeadIsMissing() async throws {
        var turns = try await EditedInTurns(rounds: 2)
        // A synced folder that has not brought b's head yet (or lost it for a while).
        let head = turns.remote.root + "/" + RemoteLayout.headPath(try turns.b.id)
        try FileManager.default.moveItem(atPath: head, toPath: head + ".away")
        let before = try Self.revisionCount(turns.a)
        for round in 1...4 {
            try turns.a.update(turns.id, try turns.a.memos()[turns.id]! + "alone \(round)\n")
            try await turns.a.sync()
        }
        #expect(try Self.revisionCount(turns.a) == before + 4, "a kept every revision while b's head was missing")
        try FileManager.default.moveItem(atPath: head + ".away", toPath: head)
        try await turns.b.sync()
        try await turns.a.sync()
        #expect(try Self.revisionCount(turns.a) < before + 4, "with b's head back, a prunes what both took in")
        #expect(try turns.b.memos() == turns.a.memos())
    }

    @Test("forgetting a device that will not come back lets the others compact")
    func forgettingReleasesCompaction() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote)
        let retired = try Device(remote: remote)
        a.snapshotMinimumBytes = 0
        let id = try await a.publish("x\n", to: retired)
        try await retired.sync()
        for round in 1...4 {
            try a.update(id, "x\n\(round)\n")
            try await a.sync()
        }
        #expect(try await DeviceHeadTests.head(of: try a.id, on: remote).snapshot == nil)
        try await a.sync(forgetting: try retired.id)
        try a.update(id, "x\nlast\n")
        try await a.sync()
        #expect(try await DeviceHeadTests.head(of: try a.id, on: remote).snapshot != nil)
        let joiner = try Device(remote: remote)
        try await joiner.sync()
        #expect(try joiner.memos() == [id: "x\nlast\n"])
    }

    @Test("a deleted memo's text stays for the trash's days: a device that joins puts it in its trash")
    func trashedTextSurvivesCompaction() async throws {
        var turns = try await EditedInTurns(rounds: 1)
        let doomed = try turns.a.create("doomed\n")
        try await turns.a.sync()
        try turns.a.update(doomed, "doomed\nedited\n")
        try turns.a.delete(doomed)
        try await turns.a.sync()
        try await turns.edit(rounds: 4)
        #expect(try await DeviceHeadTests.head(of: try turns.a.id, on: turns.remote).snapshot != nil)
        let joiner = try Device(remote: turns.remote)
        try await joiner.sync()
        #expect(try joiner.trash() == [doomed] && turns.a.trash() == [doomed])
        #expect(try joiner.keptTexts().contains("doomed\nedited\n"))
    }

    @Test("a fault at every request of a compacting sync loses nothing, and a device that joins after converges",
          arguments: [false, true])
    func faultsDuringCompaction(afterDoing: Bool) async throws {
        let clean = try await EditedInTurns(rounds: 3)
        var probe = clean.a
        try probe.update(clean.id, try probe.memos()[clean.id]! + "probe\n")
        try await clean.b.sync()
        let requests = try await probe.sync().requests
        for failAt in 1...requests {
            var turns = try await EditedInTurns(rounds: 3)
            try turns.a.update(turns.id, try turns.a.memos()[turns.id]! + "probe\n")
            try await turns.b.sync()
            let faulty = FaultyRemote(turns.remote, failAt: failAt, afterDoing: afterDoing)
            _ = try? await turns.a.sync(through: faulty)
            try await syncInTurn([turns.a, turns.b])
            let joiner = try Device(remote: turns.remote)
            try await joiner.sync()
            #expect(try turns.a.memos()[turns.id]!.hasSuffix("b3\nprobe\n"), "fault at request \(failAt)")
            #expect(try turns.b.memos() == turns.a.memos(), "fault at request \(failAt)")
            #expect(try joiner.memos() == turns.a.memos(), "fault at request \(failAt)")
        }
    }
}
