import CloudNotesTestSupport
import Foundation
import GRDB
import Testing

@testable import CloudNotesStore
@testable import CloudNotesSync

/// Which revisions this device publishes, and in which segment (`outgoingRevision`, migration v8).
@Suite("Revisions to publish")
struct OutgoingRevisionTests {
    @Test("recording a segment writes no revision's text again")
    func recordingASegmentLeavesTheTextAlone() throws {
        // A store that never checkpoints: what a transaction writes stays in the log, to be counted.
        let store = try MemoStore(path: temporaryStorePath(), durability: .committed, readOnly: false,
                                  discardingAbandonedImports: true, logLimits: .init(backgroundPages: .max, inlinePages: .max))
        let checkpointer = try #require(store.checkpointer)
        // Segment 1 first: its number takes no byte in a record (SQLite stores 0 and 1 in the type alone),
        // so only a later segment's number would make a revision's record longer.
        _ = try store.create(text: "short", now: 1, filter: nil)
        _ = try store.packLocalChanges(rules: SyncRules())
        let first = try #require(try store.segmentToPublish(maxBytes: 1 << 20, maxRevisions: 1000))
        #expect(try store.markPublished(number: first.number, hash: "h1", remote: nil))
        _ = try store.create(text: String(repeating: "회의 meeting notes\n", count: 20_000), now: 2, filter: nil)  // 480 KB
        _ = try store.packLocalChanges(rules: SyncRules())
        let before = checkpointer.pagesInLog
        let segment = try #require(try store.segmentToPublish(maxBytes: 1 << 20, maxRevisions: 1000))
        #expect(segment.number == 2 && segment.revisions.count == 1)
        // The text takes about 120 pages; the record of a segment a handful (its row, its index entry).
        let logged = checkpointer.pagesInLog - before
        #expect(logged <= 8, "recording the segment logged \(logged) pages")
    }

    @Test("a store of an older version keeps what it published, what it did not, and what it read")
    func migrationKeepsThePublishingState() throws {
        // "a" and "b" published in segments 1 and 2 (2 not yet recorded as published), "c" not published,
        // "d" read from the remote.
        let path = try writeStoreFile(migratedBy: MemoStore.migrator, upTo: "v7-named-import-marks-by-comparison") { db in
            try db.execute(sql: """
                INSERT INTO revision (id, memo, parents, deleted, text, createdAt, modifiedAt, segment)
                VALUES ('a', 'm1', '', 0, X'61', 1, 1, 1), ('b', 'm2', '', 0, X'62', 1, 1, 2),
                       ('c', 'm3', '', 0, X'63', 1, 1, NULL), ('d', 'm4', '', 0, X'64', 1, 1, 0);
                UPDATE syncState SET remote = 'file:///remote', published = 1;
                """)
        }
        let store = try MemoStore(path: path)
        #expect(try store.unpublishedRevisionCount() == 1)
        func publishNext() throws -> [String]? {
            guard let segment = try store.segmentToPublish(maxBytes: 1 << 20, maxRevisions: 1000) else { return nil }
            #expect(try store.markPublished(number: segment.number, hash: "h\(segment.number)", remote: "file:///remote"))
            return segment.revisions.map(\.id)
        }
        #expect(try publishNext() == ["b"], "the segment recorded before is sent again")
        #expect(try publishNext() == ["c"])
        #expect(try publishNext() == nil, "what was read from the remote is not published")
        #expect(try store.unpublishedRevisionCount() == 0)

        try store.adoptNewDevice("0123456789abcdef0123456789abcdef")
        #expect(try store.unpublishedRevisionCount() == 3, "a new device id publishes its own revisions again")
        #expect(try publishNext() == ["a", "b", "c"])
        try store.setRemote("file:///elsewhere")
        #expect(try store.unpublishedRevisionCount() == 4, "another remote gets every revision, read ones too")
        while let segment = try store.segmentToPublish(maxBytes: 1 << 20, maxRevisions: 1) {
            #expect(try store.markPublished(number: segment.number, hash: "h", remote: "file:///elsewhere"))
        }
        #expect(try store.unpublishedRevisionCount() == 0)
        try store.setRemote("file:///elsewhere", republish: true)
        #expect(try store.unpublishedRevisionCount() == 4, "republishing to the same remote sends every revision again")
    }

    @Test("a revision made here that was read from the remote before is not published again")
    func knownRevisionsStayRead() throws {
        let store = try MemoStore(path: temporaryStorePath())
        let revision = Revision(id: "r", memo: "m", parents: [], content: RevisionContent(text: "a", createdAt: 1, modifiedAt: 1))
        let inserted = try store.writer.write { db in
            [try revision.insert(toPublish: false, db), try revision.insert(toPublish: true, db)]
        }
        #expect(inserted == [true, false], "known already the second time")
        #expect(try store.unpublishedRevisionCount() == 0)
        let made = Revision(id: "s", memo: "m", parents: ["r"], content: RevisionContent(text: "b", createdAt: 1, modifiedAt: 2))
        #expect(try store.writer.write { db in try made.insert(toPublish: true, db) })
        #expect(try store.unpublishedRevisionCount() == 1)
    }
}
