import Foundation
import GRDB
import Testing

@testable import CloudNotesStore
@testable import CloudNotesSync

@Suite("Format 2: heads that say what was taken in, and format 1 read and upgraded")
struct DeviceHeadTests {
    /// `device`'s head on `remote`, decoded.
    static func head(of device: String, on remote: any Remote) async throws -> DeviceHead {
        try DeviceHead.decode(try #require(try await remote.read(RemoteLayout.headPath(device))), device: device)
    }

    @Test("a head says how far its device has taken in each other device, also when it published nothing new")
    func headsSayWhatWasTakenIn() async throws {
        var (a, b) = try twoDevices()
        let id = try await a.publish("one\n", to: b)
        try await a.sync()
        let aHead = try await Self.head(of: try a.id, on: a.remote)
        #expect(aHead.format == 2 && aHead.seen == [:], "b has published nothing")
        #expect(try await Self.head(of: try b.id, on: b.remote).seen == [try a.id: 1], "b read a's segment and wrote a head for it")
        try b.update(id, "one\ntwo\n")
        try await b.sync()
        try await a.sync()
        #expect(try await Self.head(of: try a.id, on: a.remote).seen == [try b.id: 1])
    }

    @Test("a memo waiting for a revision not read yet keeps the head's last word on what was taken in")
    func waitingMemoHoldsTheHeadBack() async throws {
        let setup = try await MergeAheadOfItsParent()
        let (a, b, c) = (setup.a, setup.b, setup.c)
        let before = try await Self.head(of: try c.id, on: setup.remote).seen
        try await c.sync(through: setup.staleView)
        #expect(try await Self.head(of: try c.id, on: setup.remote).seen == before)
        try await c.sync()
        let seen = try await Self.head(of: try c.id, on: setup.remote).seen
        let published = (try a.store.syncState().published, try b.store.syncState().published)
        #expect(seen == [try a.id: published.0, try b.id: published.1])
    }

    @Test("a format 1 remote is read as it is, its marker moves to format 2, and format 1 heads are rewritten")
    func formatOneIsReadAndUpgraded() async throws {
        var (a, b) = try twoDevices()
        let id = try await a.publish("written in format 1\n", to: b)
        // What a format 1 device leaves: the marker, its head and segment lines without the new members.
        let device = try a.id
        try await a.remote.write(RemoteLayout.markerPath, Data(#"{"format":"cloudnotes-sync","version":1}"#.utf8) + Data("\n".utf8))
        var head = try await Self.head(of: device, on: a.remote)
        let segmentPath = RemoteLayout.segmentPath(device, 1)
        let oldSegment = String(decoding: try #require(try await a.remote.read(segmentPath)), as: UTF8.self)
            .replacingOccurrences(of: #"{"format":2,"#, with: #"{"format":1,"#)
            .replacingOccurrences(of: #","generation":1}"#, with: "}")
        try await a.remote.write(segmentPath, Data(oldSegment.utf8))
        head.format = 1
        head.seen = nil
        head.forgotten = nil
        head.last = SyncRules.sha256(Data(oldSegment.utf8))
        try await a.remote.write(RemoteLayout.headPath(device), try RemoteLayout.encoder.encode(head))
        let c = try Device(remote: a.remote)
        try await c.sync()
        #expect(try c.memos() == [id: "written in format 1\n"])
        let marker = try JSONDecoder().decode(RemoteMarker.self, from: try #require(try await a.remote.read(RemoteLayout.markerPath)))
        #expect(marker.version == 2)
        let hash = head.last
        try await a.store.writer.write { db in try db.execute(sql: "UPDATE syncState SET publishedHash = ?", arguments: [hash]) }
        try await a.sync()
        #expect(try await Self.head(of: device, on: a.remote).format == 2, "the device's own head is rewritten in format 2")
    }

    @Test("revision lines carry their generation; one stored without it gets it from the memo's history")
    func linesCarryGenerations() async throws {
        var (a, _) = try twoDevices()
        let id = try a.create("1\n")
        try await a.sync()
        // As a store from before format 2 holds it.
        try await a.store.writer.write { db in try db.execute(sql: "UPDATE revision SET generation = NULL") }
        try a.update(id, "2\n")
        try await a.sync()
        let segment = String(decoding: try #require(try await a.remote.read(RemoteLayout.segmentPath(try a.id, 2))), as: UTF8.self)
        #expect(segment.contains(#""generation":2"#))
    }
}

@Suite("Forgetting a retired device")
struct ForgetDeviceTests {
    @Test("once a device is forgotten, its files are gone, and one that joins has every memo as the others do")
    func joinersNeverWaitForAForgottenDevice() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote), retired = try Device(remote: remote)
        let id = try await a.publish("1\n2\n3\n4\n", to: retired)
        try retired.update(id, "1\n2\n3\nfour\n")
        try await retired.sync()
        try a.update(id, "one\n2\n3\n4\n")
        try await a.sync()  // a's merge names the retired device's edit as a parent
        let retiredID = try retired.id
        let joiner = try Device(remote: remote)
        try await joiner.sync()
        try await a.sync(forgetting: String(retiredID.prefix(8)))
        let listed = try await remote.list(RemoteLayout.devicesPath)
        #expect(Set(listed) == [try a.id, try joiner.id])
        #expect(try await DeviceHeadTests.head(of: try a.id, on: remote).forgotten == [retiredID])
        try await joiner.sync()
        let late = try Device(remote: remote)
        try await late.sync()
        for device in [joiner, late] {
            #expect(try device.memos() == [id: "one\n2\n3\nfour\n"])
            #expect(try Self.waitingMemos(device) == 0)
        }
    }

    static func waitingMemos(_ device: Device) throws -> Int? {
        try device.store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM waitingMemo") }
    }

    @Test("a forgotten device that syncs again publishes everything under a new id, and its edits arrive")
    func aForgottenDeviceComesBack() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote), away = try Device(remote: remote)
        let id = try await a.publish("kept\n", to: away)
        try await away.sync()
        let oldID = try away.id
        try await a.sync(forgetting: oldID)
        try away.update(id, "kept\nedited while forgotten\n")
        try await away.sync()
        #expect(try away.id != oldID)
        try await a.sync()
        #expect(try a.memos() == [id: "kept\nedited while forgotten\n"])
        let joiner = try Device(remote: remote)
        try await joiner.sync()
        #expect(try joiner.memos() == [id: "kept\nedited while forgotten\n"])
    }

    @Test("files of a forgotten device that outlived the forget are removed by the next sync; its old head is not read")
    func leftoverFilesGo() async throws {
        let remote = try newFolderRemote()
        var a = try Device(remote: remote)
        let b = try Device(remote: remote), retired = try Device(remote: remote)
        _ = try await a.publish("x\n", to: retired)
        try await retired.sync()
        let retiredID = try retired.id
        let saved = try #require(try await remote.read(RemoteLayout.headPath(retiredID)))
        try await a.sync(forgetting: retiredID)
        try await remote.write(RemoteLayout.headPath(retiredID), saved)  // as if the removal never happened
        try await b.sync()
        let listed = try await remote.list(RemoteLayout.devicesPath)
        #expect(!listed.contains(retiredID))
        #expect(try !b.store.devicesRead().contains(retiredID))
    }

    @Test("the device to forget must be another one, named by a unique id or prefix")
    func namingTheDevice() async throws {
        let (a, b) = try twoDevices()
        try await a.sync()
        try await b.sync()
        let engine = SyncEngine(store: a.store, remote: a.remote, logger: .init(label: "test"))
        await #expect(throws: SyncError.self) { try await engine.deviceToForget(try a.id) }
        await #expect(throws: SyncError.self) { try await engine.deviceToForget("not-hex") }
        await #expect(throws: SyncError.self) { try await engine.deviceToForget("") }
        let named = try await engine.deviceToForget(String(try b.id.prefix(6)))
        #expect(named == (try b.id))
    }
}
