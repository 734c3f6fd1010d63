import CloudNotesTestSupport
import Foundation
import GRDB
import Testing

@testable import CloudNotesStore

@Suite("Memo store")
struct MemoStoreTests {
    @Test("every connection keeps statement journals in memory: a long memo's edit writes no temporary file")
    func statementJournalsInMemory() throws {
        let store = try MemoStore(path: temporaryStorePath())
        // SQLite spills a statement journal over 64 KiB to a file in /var/tmp; temp_store = MEMORY (2)
        // keeps it in memory, on the writer and on every reader.
        #expect(try store.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 2)
        #expect(try store.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA temp_store") } == 2)
    }

    @Test("a keystroke in a long memo logs the pages of its new text, not also zeros over the old text's pages")
    func freedPagesAreNotZeroed() throws {
        let store = try MemoStore(path: temporaryStorePath())
        let checkpointer = try #require(store.checkpointer)
        var text = String(repeating: "회의 meeting notes, line after line\n", count: 2_500)  // 100 KB: 25 pages of 4 KB
        let memo = try store.create(text: text, now: 1, filter: nil).memo
        // The first update leaves the first text's pages free; each later one takes them back.
        text += "a"
        _ = try store.update(id: memo.id, text: text, baseVersion: nil, now: 2, filter: nil)
        let before = checkpointer.pagesInLog
        for i in 0..<4 {
            text += "b"
            _ = try store.update(id: memo.id, text: text, baseVersion: nil, now: Int64(3 + i), filter: nil)
        }
        let textPages = text.utf8.count / 4096 + 1
        let perUpdate = Int(checkpointer.pagesInLog - before) / 4
        // Debian builds SQLite with secure_delete on, which also zeroes each freed page and logs it: two
        // pages per page of text. FAST zeroes only what a changed page held; freed pages are taken
        // back at the next keystroke anyway, and the log keeps older page images until it restarts.
        #expect(perUpdate < textPages + 10, "\(perUpdate) pages logged per update of a \(textPages)-page text")
        #expect(try store.writer.write { db in try Int.fetchOne(db, sql: "PRAGMA secure_delete") } == 2)
    }

    @Test("a change bumps the version and the store-wide sequence; a delete leaves a hidden tombstone")
    func versionsAndTombstones() throws {
        let store = try MemoStore()
        let first = try store.create(text: "one", now: 1000, filter: nil).memo
        let second = try store.create(text: "two", now: 1000, filter: nil).memo
        #expect(first.version == 1 && second.seq > first.seq)
        let updated = try store.update(id: first.id, text: "one!", baseVersion: 1, now: 2000, filter: nil)
        #expect(updated.memo.version == 2 && updated.memo.seq > second.seq)
        #expect(updated.indexBefore == 1 && updated.indexAfter == 0)
        let deleted = try #require(try store.delete(id: first.id, now: 3000, filter: nil))
        #expect(deleted.memo.deleted && deleted.memo.version == 3 && deleted.indexBefore == 0)
        #expect(try store.memo(id: first.id) == nil)
        #expect(try store.count(filter: nil) == 1)
        #expect(try store.count(filter: SearchFilter("one")) == 0)
        let tombstones = try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE deleted = 1") }
        #expect(tombstones == 1)
    }

    @Test("an update based on an old version is refused with the current memo")
    func conflicts() throws {
        let store = try MemoStore()
        let memo = try store.create(text: "a", now: 1, filter: nil).memo
        _ = try store.update(id: memo.id, text: "b", baseVersion: 1, now: 2, filter: nil)
        #expect(throws: StoreError.self) { try store.update(id: memo.id, text: "c", baseVersion: 1, now: 3, filter: nil) }
        do {
            _ = try store.update(id: memo.id, text: "c", baseVersion: 1, now: 3, filter: nil)
        } catch StoreError.versionConflict(let current) {
            #expect(current.text == "b" && current.version == 2)
        }
        #expect(try store.memo(id: memo.id)?.text == "b")
    }

    @Test("the same text again changes nothing")
    func noOpUpdate() throws {
        let store = try MemoStore()
        let memo = try store.create(text: "a", now: 1, filter: nil).memo
        let change = try store.update(id: memo.id, text: "a", baseVersion: nil, now: 5, filter: nil)
        #expect(!change.changedAnything && change.memo.version == 1 && change.memo.modifiedAt == 1)
    }

    @Test("a text that differs only in its Unicode form is a change: bytes count, not canonical equality")
    func normalizationIsAChange() throws {
        let store = try MemoStore()
        let composed = "caf\u{E9} 한"  // é as one scalar; 한 as one syllable
        let decomposed = "cafe\u{301} \u{1112}\u{1161}\u{11AB}"  // e + combining accent; 한 as three jamo
        #expect(composed == decomposed)  // what Swift's == says, and why the store must not use it
        let memo = try store.create(text: composed, now: 1, filter: nil).memo
        let change = try store.update(id: memo.id, text: decomposed, baseVersion: 1, now: 2, filter: nil)
        #expect(change.changedAnything && change.memo.version == 2)
        #expect(try store.memo(id: memo.id)?.text.utf8.elementsEqual(decomposed.utf8) == true)
    }

    @Test("text is kept byte for byte")
    func exactText() throws {
        let store = try MemoStore()
        let texts = ["\r\n\r\nCRLF\r\nline", "\n\n  leading", "emoji 👩‍👩‍👧 ✈️", "한국어 메모\n본문", "nul\u{0}inside",
                     String(repeating: "5 MB of text, 한글 too. ", count: 200_000)]
        for text in texts {
            let memo = try store.create(text: text, now: 1, filter: nil).memo
            let read = try #require(try store.memo(id: memo.id))
            #expect(read.text.utf8.elementsEqual(text.utf8))
            // The lookup by id reads columns by index (`SteppedRow`); GRDB's record reads them by name.
            let record = try store.writer.read { db in try StoredMemo.fetchOne(db, key: memo.localID) }
            #expect(read == record)
            #expect(read.title.utf8.elementsEqual(memo.title.utf8) && read.preview.utf8.elementsEqual(memo.preview.utf8))
        }
    }

    @Test("text read back is checked as UTF-8: ill-formed bytes from other hands are replaced, as String(decoding:) does")
    func storedUTF8() throws {
        let wellFormed: [[UInt8]] = [[], Array("ascii only".utf8), Array("한국어 메모 and English".utf8),
                                     Array("emoji 👩‍👩‍👧, nul \u{0} inside".utf8), Array(String(repeating: "회의 ", count: 5_000).utf8)]
        let illFormed: [[UInt8]] = [[0xFF], [0x80], Array("cut short 한".utf8.dropLast()), [0xC0, 0xAF],  // overlong '/'
                                    [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],  // a surrogate; above U+10FFFF
                                    Array("long and valid, then ".utf8) + [0xE2, 0x28, 0xA1] + Array(repeating: 0x41, count: 40)]
        for bytes in wellFormed + illFormed {
            let read = bytes.withUnsafeBufferPointer { String(storedUTF8: $0) }
            #expect(read.utf8.elementsEqual(String(decoding: bytes, as: UTF8.self).utf8), "\(bytes.prefix(12))")
        }
        for bytes in illFormed {
            #expect(bytes.withUnsafeBufferPointer { String(storedUTF8: $0) }.contains("\u{FFFD}"))
        }

        // Through the store: a memo whose text, title and preview another program wrote as bad bytes.
        let store = try MemoStore()
        let memo = try store.create(text: "title\nbody", now: 1, filter: nil).memo
        _ = try store.create(text: "written last, so the store does not remember the first text", now: 2, filter: nil)
        try store.writer.write { db in
            try db.execute(sql: "UPDATE memo SET text = X'74FF0A62', title = X'C0AF', preview = X'ED' WHERE id = ?", arguments: [memo.id])
        }
        let read = try #require(try store.memo(id: memo.id))
        #expect(read.text == "t\u{FFFD}\nb" && read.title == "\u{FFFD}\u{FFFD}" && read.preview == "\u{FFFD}")
        let row = try #require(try store.page(filter: nil, offset: 0, limit: 2).first { $0.id == memo.id })
        #expect(row.id == memo.id && row.title == "\u{FFFD}\u{FFFD}" && row.preview == "\u{FFFD}")
    }

    @Test("the list is newest first; imported memos with one timestamp keep the file's order, call after call")
    func stableOrder() throws {
        let store = try MemoStore()
        let entries = (0..<50).map { MemoStore.NewMemo(text: "memo \($0)", modifiedAt: 1_000) }
        _ = try store.importMemos(entries)
        _ = try store.create(text: "newest", now: 2_000, filter: nil)
        let page = try store.page(filter: nil, offset: 0, limit: 100)
        #expect(page.map(\.title) == ["newest"] + (0..<50).map { "memo \($0)" })
        #expect(try store.page(filter: nil, offset: 0, limit: 100) == page)
        #expect(try store.page(filter: nil, offset: 10, limit: 5) == Array(page[10..<15]))
        #expect(try store.index(of: page[20].id, filter: nil) == 20)
    }

    @Test("a page's rows are put in the list's order whatever order they come in, without the ones gone")
    func pageOrder() {
        let rows = (1...6).map { ListedMemo(localID: $0, id: "m\($0)", title: "", preview: "", modifiedAt: 0, seq: $0) }
        let order: [Int64] = [4, 2, 6, 1, 5, 3]
        let byID = Dictionary(uniqueKeysWithValues: rows.map { ($0.localID, $0) })
        let expected = order.map { byID[$0]! }
        #expect(MemoStore.ordered(expected, as: order) == expected)
        #expect(MemoStore.ordered(rows, as: order) == expected)
        #expect(MemoStore.ordered(rows.reversed(), as: order) == expected)
        #expect(MemoStore.ordered(rows.filter { $0.localID != 6 }, as: order) == expected.filter { $0.localID != 6 })
        #expect(MemoStore.ordered([], as: order).isEmpty)
        // An id twice in the page (never in a list order, but the join would give its row twice): each place gets it.
        #expect(MemoStore.ordered(rows, as: [3, 3, 1]) == [byID[3]!, byID[3]!, byID[1]!])
    }

    @Test("local ids go to SQLite as the JSON array of their decimal forms")
    func localIDsAsJSON() {
        for ids: [Int64] in [[], [0], [7, 10, 99, 100, 1_000_001], [-1, -90, Int64.min, Int64.max], Array(1...250)] {
            #expect(MemoStore.jsonArray(ids) == "[" + ids.map(String.init).joined(separator: ",") + "]")
        }
    }

    @Test("a change made through another connection is seen: the orders in memory are rebuilt")
    func otherConnections() throws {
        let path = temporaryStorePath()
        let first = try MemoStore(path: path)
        let second = try MemoStore(path: path)
        _ = try first.create(text: "one", now: 1, filter: nil)
        #expect(try second.count(filter: nil) == 1)
        #expect(try second.count(filter: SearchFilter("one")) == 1)
        let memo = try second.create(text: "two", now: 2, filter: nil).memo
        #expect(try first.count(filter: nil) == 2)
        #expect(try first.index(of: memo.id, filter: nil) == 0)
        #expect(try first.count(filter: SearchFilter("one")) == 1)
    }

    @Test("the folder is created 0700 and the file 0600")
    func permissions() throws {
        let path = temporaryStorePath()
        _ = try MemoStore(path: path)
        let file = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        let folder = try FileManager.default.attributesOfItem(atPath: (path as NSString).deletingLastPathComponent)[.posixPermissions] as? Int
        #expect(file == 0o600)
        #expect(folder == 0o700)
    }

    @Test("a file that is not a CloudNotes store is refused and left untouched")
    func foreignFiles() throws {
        let path = temporaryStorePath()
        try createFolder(of: path)
        try Data("just some text, not SQLite at all, long enough to have a header".utf8).write(to: URL(fileURLWithPath: path))
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(throws: StoreError.notACloudNotesStore(path: path)) { try MemoStore(path: path) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)

        let other = temporaryStorePath()
        try createFolder(of: other)
        try DatabaseQueue(path: other).write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        #expect(throws: StoreError.notACloudNotesStore(path: other)) { try MemoStore(path: other) }
    }

    @Test("a store written by a newer CloudNotes is refused")
    func newerSchema() throws {
        let path = temporaryStorePath()
        _ = try MemoStore(path: path)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99')")
        }
        #expect(throws: StoreError.newerSchema(path: path, unknownMigrations: ["v99"])) { try MemoStore(path: path) }
    }

    @Test("opening a store, and what a server reads as it starts, use the writer connection alone")
    func startUpOpensNoReaderConnection() throws {
        let path = temporaryStorePath()
        _ = try MemoStore(path: path).create(text: "newest", now: 1, filter: nil)
        let store = try MemoStore(path: path)  // checks the schema, looks for abandoned imports
        _ = try store.takeChangesElsewhere()
        #expect(try store.memo(at: 0, filter: nil)?.text == "newest")
        #expect(try store.syncState().remote == nil)
        #expect(store.connections.opened.load(ordering: .relaxed) == 1)
        try store.forEachMemo { _ in }  // a pool's read: its first opens a reader connection
        #expect(store.connections.opened.load(ordering: .relaxed) == 2)
    }
}

@Suite("Store privacy")
struct StorePrivacyTests {
    @Test("a folder or file others can read is reported, a private store is not")
    func privacy() throws {
        let path = temporaryStorePath()
        _ = try MemoStore(path: path)
        #expect(MemoStore.privacyProblems(ofStoreAt: path).isEmpty)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: (path as NSString).deletingLastPathComponent)
        let problems = MemoStore.privacyProblems(ofStoreAt: path)
        #expect(problems.count == 2)
        #expect(problems.allSatisfy { $0.contains("readable by other users") })
    }
}
