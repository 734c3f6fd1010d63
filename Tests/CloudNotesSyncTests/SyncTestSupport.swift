import CloudNotesTestSupport
import Foundation
import GRDB
import Logging
import Synchronization
import Testing

@testable import CloudNotesStore
@testable import CloudNotesSync

/// A device for sync tests: its own store file, syncing with a shared folder remote.
struct Device {
    let store: MemoStore
    let remote: any Remote
    var clock: Int64 = 1_000
    /// The parts this device applies a pulled segment in; when set, each is committed alone.
    var revisionsPerApplyPart: Int?
    /// The most revisions this device publishes in one segment, when set.
    var revisionsPerSegment: Int?
    /// How much pruned text makes this device write a snapshot, when set (0: whenever it may).
    var snapshotMinimumBytes: Int64?

    init(remote: any Remote, path: String = Device.newStorePath()) throws {
        store = try MemoStore(path: path)
        self.remote = remote
        try store.setRemote(remote.displayURL)
    }

    static func newStorePath() -> String {
        temporaryPath("notes.sqlite")
    }

    @discardableResult
    func sync(forgetting: String? = nil, through remote: (any Remote)? = nil) async throws -> SyncReport {
        var engine = SyncEngine(store: store, remote: remote ?? self.remote, logger: Logger(label: "test"), now: { 42 })
        if let revisionsPerApplyPart {
            engine.revisionsPerApplyPart = revisionsPerApplyPart
            engine.committingEveryApplyPart = true
        }
        if let revisionsPerSegment { engine.revisionsPerSegment = revisionsPerSegment }
        if let snapshotMinimumBytes { engine.snapshotMinimumBytes = snapshotMinimumBytes }
        var device: String?
        if let forgetting { device = try await engine.deviceToForget(forgetting) }
        return try await engine.sync(forgetting: device)
    }

    @discardableResult
    mutating func create(_ text: String) throws -> String {
        clock += 1
        return try store.create(text: text, now: clock, filter: nil).memo.id
    }

    /// Makes a memo of `text` and publishes it, then `others` sync: they all have it. Its id.
    @discardableResult
    mutating func publish(_ text: String, to others: Device...) async throws -> String {
        let id = try create(text)
        try await sync()
        for other in others { try await other.sync() }
        return id
    }

    mutating func update(_ id: String, _ text: String) throws {
        clock += 1
        _ = try store.update(id: id, text: text, baseVersion: nil, now: clock, filter: nil)
    }

    mutating func delete(_ id: String) throws {
        clock += 1
        _ = try store.delete(id: id, now: clock, filter: nil)
    }

    mutating func undelete(_ id: String) throws {
        clock += 1
        _ = try store.undelete(id: id, now: clock, filter: nil)
    }

    /// Restores version `number` of memo `id`.
    mutating func restore(_ id: String, version number: Int64) throws {
        clock += 1
        _ = try store.update([MemoStore.TextUpdate(id: id, baseVersion: nil, restoring: number)], now: clock, filter: nil)[0].get()
    }

    /// The ids of the memos in the trash.
    func trash() throws -> Set<String> {
        Set(try store.trash(offset: 0, limit: 10_000).memos.map(\.id))
    }

    /// Every text this device keeps: live memos', the trash's and every version's.
    func keptTexts() throws -> [String] {
        try store.writer.read { db in
            try Data.fetchAll(db, sql: "SELECT text FROM memo UNION ALL SELECT text FROM memoVersion")
        }.map { String(decoding: $0, as: UTF8.self) }
    }

    /// The conflicts this device lists as open: copy → memo (when each was noted differs between devices).
    func openConflicts() throws -> [String: String] {
        Dictionary(try store.openConflicts().map { ($0.copy, $0.memo) }, uniquingKeysWith: { first, _ in first })
    }

    /// The local id (SQLite's rowid) of the memo with `id`, which is what a sync's changed memos hold.
    func localID(of id: String) throws -> Int64 {
        try #require(try store.writer.read { db in try Int64.fetchOne(db, sql: "SELECT localID FROM memo WHERE id = ?", arguments: [id]) })
    }

    /// This device's id on its remotes.
    var id: String { get throws { try store.syncState().device } }

    /// Every live memo: id → text.
    func memos() throws -> [String: String] {
        var all: [String: String] = [:]
        try store.forEachMemo { batch in for memo in batch { all[memo.id] = memo.text } }
        return all
    }
}

/// Syncs the devices in turn, then the first again, so that each has what the others published.
func syncInTurn(_ devices: [Device]) async throws {
    for device in devices + devices.prefix(1) { try await device.sync() }
}

/// Devices `a` and `b` that both have a memo of `base` change it apart (`changeA`, `changeB`, given the
/// memo's id), then sync in turn, in either order: each time both end with `expected`.
func expectConvergence(from base: String, a changeA: (inout Device, String) throws -> Void,
                       b changeB: (inout Device, String) throws -> Void, to expected: String,
                       sourceLocation: SourceLocation = #_sourceLocation) async throws {
    for aFirst in [true, false] {
        var (a, b) = try twoDevices()
        let id = try await a.publish(base, to: b)
        try changeA(&a, id)
        try changeB(&b, id)
        try await syncInTurn(aFirst ? [a, b] : [b, a])
        #expect(try a.memos() == [id: expected], "\(aFirst ? "a" : "b") first", sourceLocation: sourceLocation)
        #expect(try b.memos() == a.memos(), sourceLocation: sourceLocation)
    }
}

/// A new, empty folder remote.
func newFolderRemote() throws -> FolderRemote {
    try FolderRemote(path: temporaryFolder())
}

/// Devices `a` and `b` on a new folder remote.
func twoDevices() throws -> (Device, Device) {
    let remote = try newFolderRemote()
    return (try Device(remote: remote), try Device(remote: remote))
}

/// A remote in front of another, `inner`: whatever it does not do itself, `inner` does.
protocol RemoteInFront: Remote {
    var inner: any Remote { get }
}

extension RemoteInFront {
    var displayURL: String { inner.displayURL }
    var requestCount: Int { inner.requestCount }
    func read(_ path: String) async throws -> Data? { try await inner.read(path) }
    func write(_ path: String, _ data: Data) async throws { try await inner.write(path, data) }
    func makeFolder(_ path: String) async throws { try await inner.makeFolder(path) }
    func list(_ path: String) async throws -> [String] { try await inner.list(path) }
    func removeFolder(_ path: String) async throws { try await inner.removeFolder(path) }
    func removeFile(_ path: String) async throws { try await inner.removeFile(path) }
}

/// A remote that fails on its `failAt`-th request (counting from 1), as a cut connection would, and
/// optionally only after doing what was asked (the request reached the server, the answer was lost).
final class FaultyRemote: RemoteInFront {
    let inner: any Remote
    let failAt: Int
    let afterDoing: Bool
    private let count = Atomic<Int>(0)

    init(_ inner: any Remote, failAt: Int, afterDoing: Bool) {
        self.inner = inner
        self.failAt = failAt
        self.afterDoing = afterDoing
    }

    var requestCount: Int { count.load(ordering: .relaxed) }

    private func step<T>(_ body: () async throws -> T) async throws -> T {
        let number = count.add(1, ordering: .relaxed).newValue
        guard number == failAt else { return try await body() }
        if afterDoing { _ = try await body() }
        throw SyncError.unreachable("injected fault at request \(number)")
    }

    func read(_ path: String) async throws -> Data? { try await step { try await inner.read(path) } }
    func write(_ path: String, _ data: Data) async throws { try await step { try await inner.write(path, data) } }
    func makeFolder(_ path: String) async throws { try await step { try await inner.makeFolder(path) } }
    func list(_ path: String) async throws -> [String] { try await step { try await inner.list(path) } }
    func removeFolder(_ path: String) async throws { try await step { try await inner.removeFolder(path) } }
    func removeFile(_ path: String) async throws { try await step { try await inner.removeFile(path) } }
}

/// A remote as one machine sees it while its synced folder has brought only part of it: one device's
/// files are missing, or still as they were in an earlier copy of the remote.
struct LaggingRemote: RemoteInFront {
    /// The remote as it is.
    let inner: any Remote
    let device: String
    /// Where that device's files are read from; nil while none have arrived.
    let earlier: (any Remote)?

    func read(_ path: String) async throws -> Data? {
        guard path.contains(device) else { return try await inner.read(path) }
        return try await earlier?.read(path)
    }

    func list(_ path: String) async throws -> [String] {
        if path.contains(device) { return try await earlier?.list(path) ?? [] }
        let names = try await inner.list(path)
        return path == RemoteLayout.devicesPath && earlier == nil ? names.filter { $0 != device } : names
    }
}

/// A copy of the folder remote as it is now.
func copyOf(_ remote: FolderRemote) throws -> FolderRemote {
    let path = remote.root + "-copy-\(UUID().uuidString)"
    try FileManager.default.copyItem(atPath: remote.root, toPath: path)
    return try FolderRemote(path: path)
}
