import CloudNotesStore
import Foundation
import Testing

@testable import CloudNotesSync

/// Rule 4 of sync (issue 5): a failure at any request of a sync, before or after the remote did what
/// was asked, leaves both sides consistent, and the next sync completes the work: nothing lost, nothing
/// twice.
@Suite("Sync faults")
struct FaultTests {
    @Test("a fault at every request of a sync, before and after the request took effect", arguments: [false, true])
    func faultAtEveryStep(afterDoing: Bool) async throws {
        // How many requests a clean sync of this scenario makes.
        let clean = try await Scenario()
        let requests = try await clean.a.sync().requests
        #expect(requests >= 5)
        for failAt in 1...requests {
            let scenario = try await Scenario()
            let faulty = FaultyRemote(scenario.remote, failAt: failAt, afterDoing: afterDoing)
            await #expect(throws: SyncError.self) { try await scenario.a.sync(through: faulty) }
            try await scenario.a.sync()
            try await scenario.b.sync()
            try await scenario.a.sync()
            let expected = [scenario.shared: "shared\nA\n2\nB\n", scenario.fromA: "new on a\n", scenario.fromB: "new on b\n"]
            #expect(try scenario.a.memos() == expected, "fault at request \(failAt)")
            #expect(try scenario.b.memos() == expected, "fault at request \(failAt)")
        }
    }

    /// Two devices that synced a memo, then each edited it (different lines) and made one more.
    struct Scenario {
        let remote: FolderRemote
        var a: Device
        var b: Device
        var shared = "", fromA = "", fromB = ""

        init() async throws {
            remote = try newFolderRemote()
            a = try Device(remote: remote)
            b = try Device(remote: remote)
            shared = try await a.publish("shared\n1\n2\n3\n", to: b)
            try a.update(shared, "shared\nA\n2\n3\n")
            try b.update(shared, "shared\n1\n2\nB\n")
            fromA = try a.create("new on a\n")
            fromB = try b.create("new on b\n")
            try await b.sync()
        }
    }
}
