import CloudNotesTestSupport
import Crypto
import Foundation
import Synchronization
import Testing

@testable import CloudNotesSync

/// Conditional writes (S3's `If-None-Match: *` and `If-Match`): two stores that publish under one device
/// id at the same moment (a copied store file) leave a remote every reader can read.
@Suite("Conditional writes")
struct ConditionalWriteTests {
    @Test("a copy that publishes in the middle of the original's sync takes a new id; readers see no damage")
    func racingCopies() async throws {
        let folder = try newFolderRemote()
        let path = Device.newStorePath()
        var a = try Device(remote: ConditionalRemote(try FolderRemote(path: folder.root)), path: path)
        let shared = try await a.publish("shared\n")
        let copyPath = Device.newStorePath()
        try createFolder(of: copyPath)
        a.store.checkpoint()
        try FileManager.default.copyItem(atPath: path, toPath: copyPath)
        var b = try Device(remote: ConditionalRemote(try FolderRemote(path: folder.root)), path: copyPath)
        let fromA = try a.create("from a\n")
        let fromB = try b.create("from b\n")

        // B syncs while A has written its segment 2 and not yet its head.
        let copy = b
        let remoteA = try #require(a.remote as? ConditionalRemote)
        remoteA.beforeHeadWrite { _ = try? await copy.sync() }
        try await a.sync()
        #expect(remoteA.interleaved)
        #expect(try a.store.syncState().device != b.store.syncState().device, "the copy took a new id")

        try await b.sync()
        try await a.sync()
        let reader = try Device(remote: folder)
        try await reader.sync()
        let expected = [shared: "shared\n", fromA: "from a\n", fromB: "from b\n"]
        #expect(try a.memos() == expected)
        #expect(try b.memos() == expected)
        #expect(try reader.memos() == expected)
    }

    @Test("a segment left by this device's own sync cut short is taken as it is")
    func ownLeftoverSegment() async throws {
        let folder = try newFolderRemote()
        let remote = ConditionalRemote(try FolderRemote(path: folder.root))
        var a = try Device(remote: remote)
        let first = try await a.publish("first\n")
        let second = try a.create("second\n")
        // The sync writes segment 2, and is cut before its head names it.
        await #expect(throws: SyncError.self) { try await a.sync(through: FaultyRemote(remote, failAt: 5, afterDoing: false)) }
        let device = try a.store.syncState().device
        #expect(try await folder.read(RemoteLayout.segmentPath(device, 2)) != nil)
        try await a.sync()
        #expect(try a.store.syncState().device == device, "its own leftover is no other store's")
        let reader = try Device(remote: folder)
        try await reader.sync()
        #expect(try reader.memos() == [first: "first\n", second: "second\n"])
    }
}

/// A folder remote that honours conditional writes as S3 does (ETags: the SHA-256 of the bytes), and can
/// run another sync once, just before this one's first head write.
final class ConditionalRemote: RemoteInFront, Sendable {
    let inner: any Remote
    private let seen = Mutex<[String: String]>([:])  // path -> ETag, "" when seen absent
    private let hook = Mutex<(@Sendable () async -> Void)?>(nil)
    private let didInterleave = Atomic<Bool>(false)

    init(_ inner: any Remote) { self.inner = inner }

    var interleaved: Bool { didInterleave.load(ordering: .relaxed) }

    func beforeHeadWrite(_ body: @escaping @Sendable () async -> Void) { hook.withLock { $0 = body } }

    private static func tag(_ data: Data?) -> String { data.map { SHA256.hash(data: $0).description } ?? "" }

    func read(_ path: String) async throws -> Data? {
        let data = try await inner.read(path)
        seen.withLock { $0[path] = Self.tag(data) }
        return data
    }

    func write(_ path: String, _ data: Data) async throws {
        try await inner.write(path, data)
        seen.withLock { $0[path] = Self.tag(data) }
    }

    func write(_ path: String, _ data: Data, if condition: WriteCondition) async throws {
        if path.hasSuffix("/head.json"), let body = hook.withLock({ hook in defer { hook = nil }; return hook }) {
            await body()
            didInterleave.store(true, ordering: .relaxed)
        }
        let now = Self.tag(try await inner.read(path))
        switch condition {
        case .absent: guard now.isEmpty else { throw RemoteWriteConflict(path: path) }
        case .unchanged:
            if let expected = seen.withLock({ $0[path] }), expected != now { throw RemoteWriteConflict(path: path) }
        }
        try await write(path, data)
    }
}
