import Foundation
import CloudNotesTestSupport
import Testing

@testable import CloudNotesStore
@testable import CloudNotesSync

/// Random edits on several devices, synced in random orders: every device ends with the same memos and
/// lists the same open conflicts, and no inserted line is lost (it is in the memo or in a conflict copy).
@Suite("Convergence")
struct ConvergenceTests {
    /// How finely what one device publishes reaches the others.
    enum Steps: CaseIterable, CustomTestStringConvertible {
        /// Segments of up to 1,000 revisions, each applied in one transaction.
        case whole
        /// Each memo's revisions of a segment applied in a transaction of their own.
        case memoPerTransaction
        /// One revision per segment: a memo's revisions reach the others in separate segments.
        case revisionPerSegment

        var testDescription: String { "\(self)" }

        func configure(_ device: inout Device) {
            switch self {
            case .whole: break
            case .memoPerTransaction: device.revisionsPerApplyPart = 1
            case .revisionPerSegment: device.revisionsPerSegment = 1
            }
        }
    }

    @Test("three devices, random inserts, creates and syncs, 12 seeds", arguments: 1...12, Steps.allCases)
    func devicesConverge(seed: UInt64, steps: Steps) async throws {
        try await converge(seed: seed, steps: steps)
    }

    @Test("""
        three devices, random edits, deletes, undeletes and restores, history pruned and compacted as it goes: \
        the same memos and the same trash everywhere, also on a device that joins last, no line lost
        """, arguments: 1...12)
    func historyConverges(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let remote = try newFolderRemote()
        var devices = try (0..<3).map { _ in try Device(remote: remote) }
        for index in devices.indices {
            devices[index].store.historyPolicy.versionPause = 0
            devices[index].snapshotMinimumBytes = 0
        }
        var tokens: [String] = []
        for step in 0..<50 {
            let index = Int(random.next() % 3)
            let live = try devices[index].memos().keys.sorted()
            let pick = { (ids: [String]) -> String? in ids.isEmpty ? nil : ids[Int(random.next() % UInt64(ids.count))] }
            switch random.next() % 7 {
            case 0:
                tokens.append("<t\(step)>")
                try devices[index].create("<t\(step)>\n")
            case 1, 2:
                guard let id = pick(live) else { continue }
                tokens.append("<t\(step)>")
                try devices[index].update(id, try devices[index].memos()[id]! + "<t\(step)>\n")
            case 3:
                guard let id = pick(live) else { continue }
                try devices[index].delete(id)
            case 4:
                guard let id = pick(try devices[index].trash().sorted()) else { continue }
                try devices[index].undelete(id)
            case 5:
                guard let id = pick(live) else { continue }
                let versions = try devices[index].store.versions(ofMemo: id, offset: 0, limit: 100).versions
                guard let version = pick(versions.map { String($0.number) }) else { continue }
                try devices[index].restore(id, version: Int64(version)!)
            default:
                try await devices[index].sync()
            }
        }
        for _ in 0..<3 {
            for device in devices { try await device.sync() }
        }
        let late = try Device(remote: remote)
        try await late.sync()
        let reference = try devices[0].memos()
        for device in devices.dropFirst() + [late] {
            #expect(try device.memos() == reference, "seed \(seed)")
            #expect(try device.trash() == devices[0].trash(), "seed \(seed)")
        }
        let kept = try devices.flatMap { try $0.keptTexts() }.joined(separator: "\n")
        for token in tokens {
            #expect(kept.contains(token), "seed \(seed): \(token) is in no memo, trash or version")
        }
    }

    private func converge(seed: UInt64, steps: Steps) async throws {
        var random = SplitMix64(seed: seed)
        let remote = try newFolderRemote()
        var devices = try (0..<3).map { _ in try Device(remote: remote) }
        for index in devices.indices {
            steps.configure(&devices[index])
            devices[index].snapshotMinimumBytes = 0
            // Each device says on the remote that it reads it before the history grows: one that joins
            // after a compaction reads merges whose losing side was pruned, and lists no conflict for them.
            try await devices[index].sync()
        }
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
        let referenceConflicts = try devices[0].openConflicts()
        for device in devices.dropFirst() {
            #expect(try device.memos() == reference, "seed \(seed)")
            #expect(try device.openConflicts() == referenceConflicts, "seed \(seed)")
        }
        let late = try Device(remote: remote)
        try await late.sync()
        #expect(try late.memos() == reference, "seed \(seed): a device that joins last")
        let everything = reference.values.joined(separator: "\n")
        for token in tokens {
            #expect(everything.contains(token), "seed \(seed): \(token) was lost")
        }
    }
}
