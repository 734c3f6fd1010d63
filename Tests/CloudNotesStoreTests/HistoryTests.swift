import CloudNotesTestSupport
import Foundation
import GRDB
import Testing

@testable import CloudNotesStore

@Suite("Versions and the trash")
struct HistoryTests {
    static let minute: Int64 = 60_000
    static let day = HistoryPolicy.dayMilliseconds

    /// The texts of memo `id`'s versions, newest first.
    func versionTexts(_ store: MemoStore, _ id: String) throws -> [String] {
        try store.versions(ofMemo: id, offset: 0, limit: 1000).versions.map { try store.version(ofMemo: id, number: $0.number).text }
    }

    @Test("one session's typing keeps a version only after a pause: 2,000 keystrokes keep at most 10, under 1 MB")
    func typingKeepsFewVersions() throws {
        let store = try MemoStore()
        let id = try store.create(text: "", now: 0, filter: nil).memo.id
        var text = String(repeating: "a long memo's line\n", count: 200)
        var now: Int64 = 0
        for keystroke in 1...2_000 {
            text += "x"
            // A keystroke a second, with a coffee break (6 minutes) every 500 keystrokes.
            now += keystroke % 500 == 0 ? 6 * Self.minute : 1_000
            _ = try store.update([MemoStore.TextUpdate(id: id, baseVersion: nil) { _ in text }], now: now, filter: nil)
        }
        let (total, versions) = try store.versions(ofMemo: id, offset: 0, limit: 1000)
        #expect(total == 4, "one for each pause")
        #expect(total <= 10 && versions.map(\.size).reduce(0, +) < 1 << 20)
        #expect(versions.allSatisfy { $0.author?.kind == .edit })
    }

    @Test("the text a change replaces is kept when it rested, or when another session or the shell replaces it")
    func whenATextIsKept() throws {
        let path = temporaryStorePath()
        let editor = try MemoStore(path: path)
        let id = try editor.create(text: "one", now: 0, filter: nil).memo.id
        _ = try editor.update(id: id, text: "two", baseVersion: nil, now: Self.minute, filter: nil)
        #expect(try versionTexts(editor, id) == [], "the same session, before the text rested")
        _ = try editor.update(id: id, text: "three", baseVersion: nil, now: 7 * Self.minute, filter: nil)
        #expect(try versionTexts(editor, id) == ["two"], "rested for 6 minutes")
        let shell = try MemoStore(path: path)
        shell.authorChanges(as: .shell)
        _ = try shell.update(id: id, text: "four", baseVersion: nil, now: 7 * Self.minute + 1, filter: nil)
        #expect(try versionTexts(editor, id) == ["three", "two"], "another session's change")
        let info = try editor.versions(ofMemo: id, offset: 0, limit: 10).versions
        #expect(info.map(\.number) == [2, 1])
        #expect(info.map { $0.author?.kind } == [.edit, .edit])
        #expect(info.map(\.savedAt) == [7 * Self.minute, Self.minute], "dated when the text was written")
        _ = try editor.update(id: id, text: "five", baseVersion: nil, now: 7 * Self.minute + 2, filter: nil)
        #expect(try editor.versions(ofMemo: id, offset: 0, limit: 1).versions.first?.author?.kind == .shell)
    }

    @Test("a restore makes the version's text current, keeps the text it replaces, and can be undone")
    func restore() throws {
        let store = try MemoStore()
        store.historyPolicy.versionPause = 0
        let id = try store.create(text: "draft", now: 0, filter: nil).memo.id
        _ = try store.update(id: id, text: "final", baseVersion: nil, now: 1, filter: nil)
        let restored = try store.update([MemoStore.TextUpdate(id: id, baseVersion: 2, restoring: 1)], now: 2, filter: nil)[0].get()
        #expect(restored.memo.text == "draft" && restored.memo.version == 3)
        #expect(try versionTexts(store, id) == ["final", "draft"])
        _ = try store.update([MemoStore.TextUpdate(id: id, baseVersion: nil, restoring: 2)], now: 3, filter: nil)[0].get()
        #expect(try store.memo(id: id)?.text == "final")
        #expect(try versionTexts(store, id) == ["draft", "final", "draft"])
        #expect(try store.versions(ofMemo: id, offset: 0, limit: 1).versions.first?.author?.kind == .restore)
        #expect(throws: StoreError.versionNotFound(id: id, number: 9)) {
            try store.update([MemoStore.TextUpdate(id: id, baseVersion: nil, restoring: 9)], now: 4, filter: nil)[0].get()
        }
    }

    @Test("pruning keeps every version of the last 7 days, one a day to 30, one a week to the limit, none older")
    func pruningPolicy() {
        let now = 1_000 * Self.day
        let hour = Self.day / 24
        let versions: [(localID: Int64, savedAt: Int64)] = [
            (1, now - 1 * hour), (2, now - 2 * hour), (3, now - 3 * Self.day),  // recent: all kept
            (4, now - 10 * Self.day + hour), (5, now - 10 * Self.day + 2 * hour),  // one day: the newer kept
            (6, now - 12 * Self.day),
            (7, now - 50 * Self.day), (8, now - 50 * Self.day - 2 * hour),  // one week: the newer kept
            (9, now - 100 * Self.day),  // older than 90 days
        ]
        #expect(MemoStore.versionsToPrune(versions, now: now, keepDays: 90) == [4, 8, 9])
        #expect(MemoStore.versionsToPrune(versions, now: now, keepDays: 30) == [4, 7, 8, 9])
        #expect(MemoStore.versionsToPrune(versions, now: now, keepDays: 0) == [1, 2, 3, 4, 5, 6, 7, 8, 9])
    }

    @Test("pruning removes what the policy drops from the store, and nothing else")
    func pruningTheStore() throws {
        let store = try MemoStore()
        let id = try store.create(text: "v0", now: 0, filter: nil).memo.id
        for version in 1...5 {
            _ = try store.update(id: id, text: "v\(version)", baseVersion: nil, now: Int64(version) * 10 * Self.minute, filter: nil)
        }
        #expect(try versionTexts(store, id) == ["v4", "v3", "v2", "v1", "v0"])
        // Ten days on, all five versions fall on one day: the newest is kept.
        #expect(try store.pruneHistory(now: 10 * Self.day) == 4)
        #expect(try versionTexts(store, id) == ["v4"])
        #expect(try store.memo(id: id)?.text == "v5")
    }

    @Test("a delete goes to the trash with text and versions, search never sees it, and undelete brings it back")
    func trashAndUndelete() throws {
        let store = try MemoStore()
        store.historyPolicy.versionPause = 0
        let id = try store.create(text: "needle in a haystack", now: 0, filter: nil).memo.id
        _ = try store.update(id: id, text: "needle in a barn", baseVersion: nil, now: 1, filter: nil)
        _ = try store.delete(id: id, now: 5, filter: nil)
        #expect(try store.trash(offset: 0, limit: 10).memos.map(\.id) == [id])
        #expect(try store.trash(offset: 0, limit: 10).memos.first?.trashedAt == 5)
        #expect(try store.count(filter: SearchFilter("needle")) == 0)
        #expect(try store.memo(id: id) == nil)
        #expect(try versionTexts(store, id) == ["needle in a haystack"], "versions stay readable in the trash")
        let back = try store.undelete(id: id, now: 9, filter: nil)
        #expect(back.memo.text == "needle in a barn" && !back.memo.deleted && back.indexAfter == 0)
        #expect(try store.count(filter: SearchFilter("needle")) == 1)
        #expect(try store.trash(offset: 0, limit: 10).total == 0)
        #expect(try versionTexts(store, id) == ["needle in a haystack"])
        #expect(throws: StoreError.memoNotFound(id: id)) { try store.undelete(id: id, now: 10, filter: nil) }
    }

    @Test("a store made before versions: its recent deletes go to the trash, and its texts are kept when first replaced")
    func upgradeFromVersion8() throws {
        let path = temporaryStorePath()
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        do {
            let queue = try DatabaseQueue(path: path)
            try MemoStore.migrator.migrate(queue, upTo: "v8-outgoing-revisions")
            try queue.write { db in
                for (id, text, deleted, seq) in [("a", "live text", false, 1), ("b", "deleted text", true, 2), ("c", " \n", true, 3)] {
                    try db.execute(sql: """
                        INSERT INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, deleted, indexed)
                        VALUES (?, ?, '', '', 0, ?, 1, ?, ?, 0)
                        """, arguments: [id, Data(text.utf8), seq * 1000, seq, deleted])
                }
            }
        }
        let store = try MemoStore(path: path)
        #expect(try store.trash(offset: 0, limit: 10).memos.map(\.id) == ["b"], "a blank tombstone stays out")
        #expect(try store.trash(offset: 0, limit: 10).memos.first?.trashedAt == 2000, "dated by its delete")
        _ = try store.update(id: "a", text: "edited", baseVersion: nil, now: 5000, filter: nil)
        let kept = try store.versions(ofMemo: "a", offset: 0, limit: 10).versions
        #expect(kept.count == 1 && kept.first?.author == nil, "an unknown author counts as someone else")
        #expect(try versionTexts(store, "a") == ["live text"])
    }

    @Test("a blank memo that keeps no version skips the trash")
    func blankMemosSkipTheTrash() throws {
        let store = try MemoStore()
        let id = try store.create(text: " \n", now: 0, filter: nil).memo.id
        _ = try store.delete(id: id, now: 1, filter: nil, onlyIfBlank: true)
        #expect(try store.trash(offset: 0, limit: 10).total == 0)
    }

    @Test("the trash is purged after its days: text and versions go, the tombstone stays")
    func purge() throws {
        let store = try MemoStore()
        store.historyPolicy.versionPause = 0
        let old = try store.create(text: "old", now: 0, filter: nil).memo.id
        _ = try store.update(id: old, text: "older", baseVersion: nil, now: 1, filter: nil)
        _ = try store.delete(id: old, now: 2, filter: nil)
        let recent = try store.create(text: "recent", now: 3, filter: nil).memo.id
        _ = try store.delete(id: recent, now: 20 * Self.day, filter: nil)
        let (purged, _) = try store.applyHistoryPolicy(now: 31 * Self.day)
        #expect(purged == 1)
        #expect(try store.trash(offset: 0, limit: 10).memos.map(\.id) == [recent])
        #expect(throws: StoreError.memoNotFound(id: old)) { try store.versions(ofMemo: old, offset: 0, limit: 1) }
        let (versionCount, tombstoneEmptied) = try store.writer.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM memoVersion"),
             try Bool.fetchOne(db, sql: "SELECT deleted AND length(text) = 0 FROM memo WHERE id = ?", arguments: [old]))
        }
        #expect(versionCount == 0 && tombstoneEmptied == true)
        #expect(try store.purgeTrash(deletedBefore: nil) == 1)
        #expect(try store.trash(offset: 0, limit: 10).total == 0)
    }
}
