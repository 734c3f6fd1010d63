import CloudNotesTestSupport
import Foundation
import GRDB
import Synchronization
import Testing

@testable import CloudNotesStore

@Suite("Import into the store")
struct StoreImportTests {
    @Test("an import shown a statement at a time is shown whole: the file's order, fresh and unique sequence numbers")
    func largeImportIsShownWhole() throws {
        let store = try MemoStore()
        _ = try store.create(text: "here before", now: 5_000, filter: nil)
        let count = ImportSession.rowsPerStatement * 2 + 500
        let entries = (0..<count).map { MemoStore.NewMemo(text: "memo \($0)", modifiedAt: 1_000) }
        #expect(try store.importMemos(entries, chunkSize: 700) == count)
        let page = try store.page(filter: nil, offset: 0, limit: count + 1)
        #expect(page.map(\.title) == ["here before"] + (0..<count).map { "memo \($0)" })
        let importedSeqs = page.dropFirst().map(\.seq)
        #expect(Set(importedSeqs).count == count)
        #expect(importedSeqs.allSatisfy { $0 > page[0].seq })
    }

    @Test("an import writes through a connection of its own: SQLite's default 2 MB of pages, triggers off; the writer keeps its 4 MB")
    func importConnection() throws {
        let store = try MemoStore(path: temporaryStorePath())
        let session = try ImportSession(store: store)
        let connection = try #require(session.connection)
        // `data_version` moves for the commits of other connections only.
        let dataVersion = { try store.writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA data_version") } }
        let before = try dataVersion()
        try session.add([MemoStore.NewMemo(text: "imported", modifiedAt: 1_000)])
        #expect(try dataVersion() != before, "the chunk was committed by another connection than the writer")
        let cacheSize = { (writer: any DatabaseWriter) in
            try writer.writeWithoutTransaction { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? 0 }
        }
        #expect(try cacheSize(connection) == -MemoStore.defaultPageCacheKiB)
        #expect(try cacheSize(store.writer) == -MemoStore.pageCacheKiB)
        // A trigger SQLite considers is a sub-program of the statement.
        let runsTriggers = { (writer: any DatabaseWriter) in
            try writer.writeWithoutTransaction { db in
                try Row.fetchAll(db, sql: "EXPLAIN INSERT INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq) VALUES ('x', X'', '', '', 1, 1, 1, 1)")
                    .contains { $0["opcode"] as String == "Program" }
            }
        }
        #expect(try !runsTriggers(connection))
        #expect(try runsTriggers(store.writer), "the check can fail")
        try session.finish()
        #expect(try store.page(filter: nil, offset: 0, limit: 2).map(\.title) == ["imported"])
    }

    @Test("an import keeps each text byte for byte, the empty one and NULs included, and lists it as a created memo")
    func importedTextIsExact() throws {
        let store = try MemoStore()
        let texts = ["", "\u{0}", "nul\u{0}inside", "\n\nno title", "한국어 메모\n본문", "emoji 👩‍👩‍👧 ✈️\r\n",
                     String(repeating: "100 KB of text, 한글 too.\n", count: 4_000)]
        #expect(try store.importMemos(texts.map { MemoStore.NewMemo(text: $0, modifiedAt: 1_000) }) == texts.count)
        let page = try store.page(filter: nil, offset: 0, limit: 10)
        #expect(page.count == texts.count)
        for (text, entry) in zip(texts, page) {
            let memo = try #require(try store.memo(id: entry.id))
            #expect(memo.text.utf8.elementsEqual(text.utf8))
            let created = try store.create(text: text, now: 1, filter: nil).memo
            #expect(memo.title.utf8.elementsEqual(created.title.utf8) && memo.preview.utf8.elementsEqual(created.preview.utf8))
        }
        let empty = try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE text = X''") }
        #expect(empty == 2, "an empty text is an empty BLOB, not NULL, imported or created")
    }

    @Test("an import's INSERTs of many memos each put every memo's text, title and number with that memo")
    func multiRowInsertsKeepEachMemoWhole() throws {
        let store = try MemoStore()
        // Chunks that are not a multiple of one INSERT's memos, and a last chunk shorter than one INSERT.
        let count = MemoStore.memosPerInsert * 3 + 7
        let chunkSize = MemoStore.memosPerInsert + MemoStore.memosPerInsert / 2 + 1
        let texts = (0..<count).map { "memo \($0)\n" + String(repeating: "본문 \($0) ", count: $0 % 5) }
        #expect(try store.importMemos(texts.map { MemoStore.NewMemo(text: $0, modifiedAt: 1_000) }, chunkSize: chunkSize) == count)
        let page = try store.page(filter: nil, offset: 0, limit: count + 1)
        #expect(page.map(\.title) == (0..<count).map { "memo \($0)" })
        #expect(zip(page, page.dropFirst()).allSatisfy { $0.seq > $1.seq }, "the file's order, numbered downward")
        for (text, entry) in zip(texts, page) {
            #expect(try store.memo(id: entry.id)?.text == text)
        }
        #expect(MemoStore.insertSQL(memos: 2).components(separatedBy: "?").count - 1 == 2 * 7)
        #expect(MemoStore.insertParameter(7, ofMemo: MemoStore.memosPerInsert - 1) == Int32(MemoStore.memosPerInsert) * 7)
    }

    @Test("memos of several megabytes are shown too, whole and in the file's order")
    func longImportedMemosAreShown() throws {
        let store = try MemoStore()
        let long = String(repeating: "가", count: (4 << 20) / 3 + 1)  // 3 bytes each: over 4 MB
        let texts = ["short 0", "long 1\n" + long, "long 2\n" + long, "short 3", "long 4\n" + long]
        #expect(try store.importMemos(texts.map { MemoStore.NewMemo(text: $0, modifiedAt: 1_000) }) == texts.count)
        let page = try store.page(filter: nil, offset: 0, limit: 10)
        #expect(page.map(\.title) == ["short 0", "long 1", "long 2", "short 3", "long 4"])
        #expect(Set(page.map(\.seq)).count == texts.count)
        #expect(try store.memo(id: page[4].id)?.text == texts[4])
    }

    @Test("an import chunk's ids share their first byte: its commit logs a few pages of the id index, not most of it")
    func importChunkIDsShareTheirFirstByte() throws {
        // A store that never checkpoints: its log only grows, and a commit's pages are its growth.
        let (store, checkpointer, _) = try storeOnFile()
        let memos = { (count: Int) in (0..<count).map { MemoStore.NewMemo(text: "memo \($0)", modifiedAt: 1_000) } }
        _ = try store.importMemos(memos(20_000), chunkSize: 1000)  // an id index of about 300 pages

        let session = try ImportSession(store: store)
        let before = checkpointer.pagesInLog
        try session.add(memos(1000))
        // The chunk logs about 80 pages; with fully random ids, 320 (the id index's pages, nearly all).
        #expect(checkpointer.pagesInLog - before < 150)
        let ids = try store.writer.read { db in
            try String.fetchAll(db, sql: """
                SELECT id FROM memo JOIN importChunk ON localID BETWEEN firstLocalID AND lastLocalID WHERE batch = ? ORDER BY localID
                """, arguments: [session.batch])
        }
        #expect(ids.count == 1000 && Set(ids).count == 1000)
        #expect(Set(ids.map { $0.prefix(2) }).count == 1)
        #expect(ids.allSatisfy { UUID(uuidString: $0) != nil && $0 == $0.lowercased() && Array($0)[14] == "4" })
        session.abandon()

        // Chunks draw their byte each: twenty chunks on one byte would be a constant, not a draw.
        let all = try store.writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM memo ORDER BY localID") }
        #expect(Set(stride(from: 0, to: all.count, by: 1000).map { all[$0].prefix(2) }).count > 1)
    }

    /// On a file an import writes through a connection of its own; in memory, through the writer.
    @Test("an import's memos stay hidden until all are in; a cancelled one leaves nothing", arguments: [false, true])
    func importIsAllOrNothing(onFile: Bool) throws {
        let store = try onFile ? MemoStore(path: temporaryStorePath()) : MemoStore()
        _ = try store.create(text: "already here", now: 1, filter: nil)
        let entries = (0..<5000).map { MemoStore.NewMemo(text: "memo \($0)", modifiedAt: 1_000) }
        let seenDuringImport = Mutex<[Int]>([])
        let imported = try store.importMemos(entries, chunkSize: 1000, progress: { _ in
            let visible = (try? store.count(filter: nil)) ?? -1
            seenDuringImport.withLock { $0.append(visible) }
        })
        #expect(imported == 5000)
        #expect(seenDuringImport.withLock { $0 } == [1, 1, 1, 1, 1])
        #expect(try store.count(filter: nil) == 5001)
        #expect(try store.count(filter: SearchFilter("memo 4999")) == 1)

        let chunks = Mutex(0)
        #expect(throws: StoreError.cancelled) {
            try store.importMemos(entries, chunkSize: 1000, isCancelled: { chunks.withLock { $0 } >= 2 }, progress: { _ in chunks.withLock { $0 += 1 } })
        }
        #expect(try store.count(filter: nil) == 5001)
        let leftovers = try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE importBatch IS NOT NULL") }
        #expect(leftovers == 0)
    }

    @Test("memos of an import whose process died are removed when the store is opened")
    func abandonedImports() throws {
        let path = temporaryStorePath()
        do {
            let store = try MemoStore(path: path)
            _ = try store.create(text: "kept", now: 1, filter: nil)
            try store.writer.write { db in
                try db.execute(sql: """
                    INSERT INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, deleted, importBatch)
                    VALUES ('x', X'61', 'a', '', 1, 1, 1, 99, 0, X''), ('y', X'62', 'b', '', 1, 1, 1, 100, 0, X'');
                    INSERT INTO importChunk (batch, firstLocalID, lastLocalID)
                    SELECT '2147483646 dead', min(localID), max(localID) FROM memo WHERE importBatch IS NOT NULL;
                    """)
            }
            #expect(try store.count(filter: nil) == 1)
        }
        let reopened = try MemoStore(path: path)
        let rows = try reopened.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM memo") }
        #expect(rows == 1)
        #expect(try reopened.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM importChunk") } == 0)
    }

    @Test("memos an older version's import marked by name are removed when its process died, kept while it runs")
    func abandonedImportsOfAnOlderVersion() throws {
        let path = try writeStoreFile(migratedBy: MemoStore.migrator, upTo: "v4-short-term-index") { db in
            try db.execute(sql: """
                INSERT INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, deleted, importBatch)
                VALUES ('kept', X'61', 'a', '', 1, 1, 1, 1, 0, NULL),
                       ('x', X'61', 'a', '', 1, 1, 1, 2, 0, '2147483646 dead'),
                       ('y', X'62', 'b', '', 1, 1, 1, 3, 0, '2147483646 dead'),
                       ('z', X'63', 'c', '', 1, 1, 1, 4, 0, '1 running')
                """)
        }
        // What `StoredMemo` writes for a memo of an import under way: no name, left to its range.
        try writeStoreFile(at: path, migratedBy: MemoStore.migrator) { db in
            try db.execute(sql: """
                INSERT INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, deleted, importBatch)
                VALUES ('w', X'64', 'd', '', 1, 1, 1, 5, 0, 'import')
                """)
        }
        let reopened = try MemoStore(path: path)
        let ids = try reopened.writer.read { db in try String.fetchAll(db, sql: "SELECT id FROM memo ORDER BY id") }
        #expect(ids == ["kept", "w", "z"], "process 1 runs: its import goes on, and shows its memos by name")
        #expect(try reopened.count(filter: nil) == 1)
    }

    @Test("the names of older versions' imports are looked up through their index, which an import's marks stay out of")
    func namedImportMarksIndex() throws {
        let store = try MemoStore(path: temporaryStorePath())
        let session = try ImportSession(store: store)
        try session.add((0..<3).map { MemoStore.NewMemo(text: "memo \($0)", modifiedAt: 1) })
        try store.writer.read { db in
            for sql in ["SELECT DISTINCT importBatch FROM memo WHERE \(MemoStore.namedImportMark)",
                        "SELECT localID FROM memo WHERE \(MemoStore.namedImportMark) AND importBatch = 'a name'"] {
                let plan = try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN \(sql)").map { $0["detail"] as String }
                #expect(plan.contains { $0.contains("INDEX memo_import_names") }, "\(sql): \(plan)")
            }
            let indexed = try Int.fetchOne(db, sql: "SELECT count(*) FROM memo INDEXED BY memo_import_names WHERE \(MemoStore.namedImportMark)")
            #expect(indexed == 0)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE importBatch IS NOT NULL") == 3)
        }
    }

    /// SQLite keeps a statement journal (a copy of every page the statement changes) for a statement
    /// that writes several rows and may abort, by its own test: it calls a function, or it halts on a
    /// failed constraint with ABORT, which takes the statement back.
    @Test("an import's INSERTs and the UPDATEs that show it may not abort: SQLite keeps no statement journal for them")
    func importWritesMayNotAbort() throws {
        let store = try MemoStore()
        let mayAbort = { (db: Database, sql: String) in
            let parameters = StatementArguments(Array(repeating: DatabaseValue.null, count: sql.count { $0 == "?" }))
            return try Row.fetchAll(db, sql: "EXPLAIN \(sql)", arguments: parameters).contains { step in
                let opcode: String = step["opcode"]
                let abortsOnFailure = ["Halt", "HaltIfNull"].contains(opcode) && step["p1"] != 0 && step["p2"] == 2  // OE_Abort
                return ["Function", "PureFunc"].contains(opcode) || abortsOnFailure
            }
        }
        let writes = [MemoStore.insertSQL(memos: MemoStore.memosPerInsert), ImportSession.show, ImportSession.showNumberedAgain]
        try store.writer.write { db in
            // The UPDATEs of `finish` run on the writer, its triggers on.
            for sql in writes.dropFirst() { #expect(try !mayAbort(db, sql), "\(sql)") }
            try db.withoutTriggers {
                for sql in writes { #expect(try !mayAbort(db, sql), "\(sql)") }
                // The check can fail: without OR FAIL, and with the index of names as migration v6 made it.
                for sql in writes where sql.contains("OR FAIL") {
                    #expect(try mayAbort(db, sql.replacingOccurrences(of: " OR FAIL", with: "")))
                }
                try db.execute(sql: "CREATE INDEX memo_typeof ON memo(importBatch) WHERE typeof(importBatch) = 'text'")
                #expect(try mayAbort(db, writes[0]) && mayAbort(db, writes[1]))
                try db.execute(sql: "DROP INDEX memo_typeof")
            }
        }
    }

    /// Also when a change made meanwhile has the import's memos numbered again: the new numbers keep
    /// the size of the old.
    @Test("showing an import keeps each record's size: SQLite rewrites only what changed, not the texts",
          arguments: [false, true])
    func showingAnImportRewritesNoText(changeMeanwhile: Bool) throws {
        // A store that never checkpoints: its log only grows, and a commit's pages are its growth.
        let store = try MemoStore(path: temporaryStorePath(), durability: .committed, readOnly: false,
                                  discardingAbandonedImports: true,
                                  logLimits: LogCheckpointer.Limits(backgroundPages: .max, inlinePages: .max))
        let checkpointer = try #require(store.checkpointer)
        for index in 0..<119 { _ = try store.create(text: "here before \(index)", now: 1, filter: nil) }
        let text = String(repeating: "an imported line of text\n", count: 4000)  // 100 KB: 25 overflow pages
        let session = try ImportSession(store: store)
        try session.add((0..<20).map { MemoStore.NewMemo(text: "memo \($0)\n" + text, modifiedAt: 1_000) })
        if changeMeanwhile { _ = try store.create(text: "meanwhile", now: 1, filter: nil) }
        let before = checkpointer.pagesInLog
        try session.finish()
        // The texts fill about 500 pages. A record that keeps its size logs the pages that hold what
        // changed (its header, and its number and mark after the text); one that changed size, all.
        #expect(checkpointer.pagesInLog - before < 100)
        #expect(try store.count(filter: nil) == (changeMeanwhile ? 140 : 139))
        let seqs = try store.writer.read { db in try Int64.fetchAll(db, sql: "SELECT seq FROM memo WHERE length(text) > 1000") }
        #expect(Set(seqs).count == 20)
        #expect(try store.writer.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM importChunk") } == 0)
    }

    /// The numbers of every memo, by title.
    func seqsByTitle(_ store: MemoStore) throws -> [String: Int64] {
        try store.writer.read { db in
            Dictionary(uniqueKeysWithValues: try Row.fetchAll(db, sql: "SELECT title, seq FROM memo").map { ($0[0], $0[1]) })
        }
    }

    @Test("an import's memos are numbered above every number, the file's first the highest; shown as numbered when nothing came meanwhile")
    func importNumbering() throws {
        let store = try MemoStore()
        for index in 0..<3 { _ = try store.create(text: "before \(index)", now: 1, filter: nil) }
        let session = try ImportSession(store: store)
        try session.add((0..<5).map { MemoStore.NewMemo(text: "a\($0)", modifiedAt: 1_000) })
        try session.add((5..<8).map { MemoStore.NewMemo(text: "a\($0)", modifiedAt: 1_000) })
        let hidden = try seqsByTitle(store)
        try session.finish()
        let shown = try seqsByTitle(store)
        #expect(shown == hidden, "nothing was numbered above the import: its numbers stay")
        let imported = (0..<8).map { shown["a\($0)"]! }
        #expect(imported == imported.sorted(by: >) && Set(imported).count == 8, "numbered down, the file's first the highest")
        #expect(imported.last! > (0..<3).map { shown["before \($0)"]! }.max()!)
        #expect(try store.page(filter: nil, offset: 0, limit: 8).map(\.title) == (0..<8).map { "a\($0)" })
        let after = try store.create(text: "after", now: 1, filter: nil).memo
        #expect(after.seq > imported.first!, "a change after the import is numbered above it")
    }

    @Test("a change numbered above an unfinished import has its memos numbered again above it, in the same order")
    func importNumberedAgain() throws {
        let store = try MemoStore()
        _ = try store.create(text: "before", now: 1, filter: nil)
        let first = try ImportSession(store: store), second = try ImportSession(store: store)
        try first.add((0..<4).map { MemoStore.NewMemo(text: "a\($0)", modifiedAt: 1_000) })
        let meanwhile = try store.create(text: "meanwhile", now: 1, filter: nil).memo
        try second.add((0..<3).map { MemoStore.NewMemo(text: "b\($0)", modifiedAt: 1_000) })
        try first.add((4..<6).map { MemoStore.NewMemo(text: "a\($0)", modifiedAt: 1_000) })
        try first.finish()
        let afterFirst = try seqsByTitle(store)
        let a = (0..<6).map { afterFirst["a\($0)"]! }
        #expect(a == a.sorted(by: >))
        #expect(a.last! > meanwhile.seq && a.last! > (0..<3).map { afterFirst["b\($0)"]! }.max()!,
                "above the change made meanwhile, and above the other import's hidden numbers")
        try second.finish()
        let all = try seqsByTitle(store)
        let b = (0..<3).map { all["b\($0)"]! }
        #expect(b == b.sorted(by: >) && b.last! > a.first!)
        #expect(Set(all.values).count == all.count)
        #expect(try store.page(filter: nil, offset: 0, limit: 20).map(\.title)
                == (0..<3).map { "b\($0)" } + (0..<6).map { "a\($0)" } + ["meanwhile", "before"])
    }

    @Test("a chunk whose INSERT fails part-way (OR FAIL keeps the statement's earlier memos) is rolled back whole, and takes no numbers",
          arguments: [false, true])
    func failedChunkLeavesNothing(onFile: Bool) throws {
        let store = try onFile ? MemoStore(path: temporaryStorePath()) : MemoStore()
        let planted = try store.create(text: "planted", now: 1, filter: nil).memo
        let session = try ImportSession(store: store)
        let memos = { (range: Range<Int>) in range.map { MemoStore.NewMemo(text: "a\($0)", modifiedAt: 1_000) } }
        try session.add(memos(0..<5))
        let lowest = try #require(try seqsByTitle(store)["a4"])
        // The planted memo takes the number of the next chunk's 26th memo, in its second INSERT of many.
        let clash = lowest - 1 - Int64(MemoStore.memosPerInsert) - 5
        let setSeq = { (seq: Int64) in
            try store.writer.write { db in try db.execute(sql: "UPDATE memo SET seq = ? WHERE id = ?", arguments: [seq, planted.id]) }
        }
        try setSeq(clash)
        #expect(throws: StoreError.self) { try session.add(memos(5..<(2 * MemoStore.memosPerInsert + 5))) }
        let hidden = try store.writer.read { db in
            (try Int.fetchOne(db, sql: "SELECT count(*) FROM memo WHERE importBatch IS NOT NULL"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM importChunk"))
        }
        #expect(hidden.0 == 5 && hidden.1 == 1, "the first chunk only")

        try setSeq(planted.seq)
        try session.add(memos(5..<(2 * MemoStore.memosPerInsert + 5)))
        try session.finish()
        let seqs = try seqsByTitle(store)
        let imported = (0..<(2 * MemoStore.memosPerInsert + 5)).map { seqs["a\($0)"]! }
        #expect(imported == Array(stride(from: lowest + 4, through: lowest + 4 - Int64(imported.count - 1), by: -1)),
                "numbered on from the first chunk's last memo, as if the failed chunk had never been")
    }
}
