import CloudNotesStore
import Foundation
import CloudNotesTestSupport
import Testing

@testable import CloudNotesSync

/// Random edits on several devices, synced in random orders: every device ends with the same memos,
/// and no inserted line is lost (it is in the memo or in a conflict copy).
@Suite("Convergence")
struct ConvergenceTests {
    /// Each seed runs twice: applying pulled segments whole, and one memo per transaction.
    @Test("three devices, random inserts, creates and syncs, 12 seeds", arguments: 1...12, [nil, 1])
    func devicesConverge(seed: UInt64, revisionsPerApplyPart: Int?) async throws {
        var random = SplitMix64(seed: seed)
        let remote = try newFolderRemote()
        var devices = try (0..<3).map { _ in try Device(remote: remote) }
        for index in devices.indices { devices[index].revisionsPerApplyPart = revisionsPerApplyPart }
        var tokens: [String] = []
        for step in 0..<40 {
            let index = Int(random.next() % 3)
            switch random.next() % 4 {
            case 0:
                let token = "<t\(step)>"
                tokens.append(token)
                try devices[index].create("\(token)\n")
            case 1, 2:
                let memos = try devices[index].memos().sorted { $0.key < $1.key }
                guard !memos.isEmpty else { continue }
                let (id, text) = memos[Int(random.next() % UInt64(memos.count))]
                var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                let token = "<t\(step)>"
                tokens.append(token)
                lines.insert(token, at: Int(random.next() % UInt64(lines.count)))
                try devices[index].update(id, lines.joined(separator: "\n"))
            default:
                try await devices[index].sync()
            }
        }
        for _ in 0..<3 {
            for device in devices { try await device.sync() }
        }
        let reference = try devices[0].memos()
        for device in devices.dropFirst() {
            #expect(try device.memos() == reference, "seed \(seed)")
        }
        let everything = reference.values.joined(separator: "\n")
        for token in tokens {
            #expect(everything.contains(token), "seed \(seed): \(token) was lost")
        }
    }
}
