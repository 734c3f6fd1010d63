import CloudNotesTestSupport
import Foundation
import GRDB
import Testing

@testable import CloudNotesStore
@testable import CloudNotesSync

/// A pulled segment is applied in parts, one transaction each, so that a keystroke never waits for a
/// whole segment; the parts keep each memo's revisions together, so the result is the same.
@Suite("Applying a segment in parts")
struct ApplyPartsTests {
    let rules = SyncRules()

    /// The revisions a device publishes after making five memos and editing the second twice (that
    /// memo has three revisions, the others one).
    private func publishedRevisions() throws -> [Revision] {
        var device = try Device(remote: try newFolderRemote())
        var ids: [String] = []
        for index in 0..<5 { ids.append(try device.create("memo \(index)\n")) }
        _ = try device.store.packLocalChanges(rules: rules)
        try device.update(ids[1], "memo 1\nedited\n")
        _ = try device.store.packLocalChanges(rules: rules)
        try device.update(ids[1], "memo 1\nedited twice\n")
        _ = try device.store.packLocalChanges(rules: rules)
        let segment = try #require(try device.store.segmentToPublish(maxBytes: 1 << 20, maxRevisions: 1000))
        #expect(segment.revisions.count == 7)
        return segment.revisions
    }

    /// Every live memo of `store`: id → (text, version).
    private func memos(_ store: MemoStore) throws -> [String: [String]] {
        var all: [String: [String]] = [:]
        try store.forEachMemo { batch in for memo in batch { all[memo.id] = [memo.text, "\(memo.version)"] } }
        return all
    }

    /// The ids of the memos `outcome` counts as changed, which it holds by their local ids in `store`.
    private func changedIDs(_ outcome: PullOutcome, in store: MemoStore) throws -> Set<String> {
        try store.writer.read { db in
            var ids = Set<String>()
            for row in try Row.fetchAll(db, sql: "SELECT localID, id FROM memo") where outcome.changedMemos.contains(row["localID"]) {
                ids.insert(row["id"])
            }
            return ids
        }
    }

    private func visibleChanges(_ store: MemoStore) throws -> Int64 {
        try #require(try store.writer.read { try store.visibleChangeCount($0) })
    }

    @Test("parts keep a memo's revisions together, in their order, and memos in the order they first appear")
    func partsKeepMemosWhole() throws {
        let revisions = try publishedRevisions()
        let parts = MemoStore.applyParts(of: revisions, size: 2)
        #expect(parts.flatMap { $0 }.count == revisions.count)
        for part in parts {
            for other in parts where other != part {
                #expect(Set(part.map(\.memo)).isDisjoint(with: other.map(\.memo)))
            }
        }
        for memo in Set(revisions.map(\.memo)) {
            #expect(parts.flatMap { $0 }.filter { $0.memo == memo }.map(\.id) == revisions.filter { $0.memo == memo }.map(\.id))
        }
        var firstAppearance: [String] = []
        for revision in revisions where !firstAppearance.contains(revision.memo) { firstAppearance.append(revision.memo) }
        var partOrder: [String] = []
        for revision in parts.flatMap({ $0 }) where !partOrder.contains(revision.memo) { partOrder.append(revision.memo) }
        #expect(partOrder == firstAppearance)
        #expect(parts.count == 3)  // memos 0 and 1 (three revisions), 2 and 3, then 4
        #expect(MemoStore.applyParts(of: [], size: 2) == [[]])
    }

    @Test("committing every part, a segment commits once per part and ends as when applied whole")
    func partsEndAsWhole() throws {
        let revisions = try publishedRevisions()
        let segment = PulledSegment(device: "0123456789abcdef0123456789abcdef", number: 1, hash: "hash", revisions: revisions)
        let whole = try MemoStore(path: Device.newStorePath())
        let inParts = try MemoStore(path: Device.newStorePath())
        let (wholeBefore, partsBefore) = (try visibleChanges(whole), try visibleChanges(inParts))
        let wholeOutcome = try #require(try whole.apply(segment, rules: rules, now: 42, revisionsPerPart: 2))
        let partsOutcome = try #require(try inParts.apply(segment, rules: rules, now: 42, revisionsPerPart: 2, committingEveryPart: true))
        #expect(try visibleChanges(whole) - wholeBefore == 1, "alone, in parts but one transaction")
        #expect(try visibleChanges(inParts) - partsBefore == 3)
        #expect(partsOutcome.conflicts == wholeOutcome.conflicts && partsOutcome.visibleAdoptions == wholeOutcome.visibleAdoptions)
        #expect(try changedIDs(partsOutcome, in: inParts) == changedIDs(wholeOutcome, in: whole))
        #expect(try changedIDs(partsOutcome, in: inParts) == Set(revisions.map(\.memo)))
        #expect(try memos(inParts) == memos(whole))
        #expect(try inParts.readPosition(of: segment.device) == ReadPosition(applied: 1, lastHash: "hash"))
        // Applied again (another process got there first): nothing more happens.
        #expect(try inParts.apply(segment, rules: rules, now: 43, revisionsPerPart: 2, committingEveryPart: true) == nil)
    }

    @Test("alone, a segment is one transaction; a write of this process waiting for its turn gets it after the part under way")
    func waitingWriteGetsInBetweenParts() async throws {
        let revisions = try publishedRevisions()
        let segment = PulledSegment(device: "0123456789abcdef0123456789abcdef", number: 1, hash: "hash", revisions: revisions)
        let server = try MemoStore(path: Device.newStorePath())
        let sync = try MemoStore(besides: server)
        let before = try visibleChanges(server)
        // The server holds the write lock; the sync's apply asks for it, then a keystroke does.
        let release = DispatchSemaphore(value: 0)
        let holder = runOnThread { try server.write { _ in release.wait() } }
        #expect(try await waitUntil { server.writeTurns.askedFor == 1 })
        let applying = runOnThread { _ = try sync.apply(segment, rules: rules, now: 42, revisionsPerPart: 2) }
        #expect(try await waitUntil { server.writeTurns.askedFor == 2 })
        let keystroke = runOnThread { _ = try server.create(text: "typed during the sync", now: 50, filter: nil) }
        #expect(try await waitUntil { server.writeTurns.askedFor == 3 })
        release.signal()
        for thread in [holder, applying, keystroke] { try thread.wait() }
        // The apply committed after its first part for the keystroke, then the rest in one transaction.
        #expect(try visibleChanges(server) - before == 3)
        #expect(try memos(server).count == 6)
        #expect(try server.readPosition(of: segment.device).applied == 1)
    }
}
