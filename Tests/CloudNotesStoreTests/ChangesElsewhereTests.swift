import CloudNotesTestSupport
import Foundation
import Testing

@testable import CloudNotesStore

/// Two stores on one file stand for two processes: each sees the other's commits, never its own.
@Suite("Changes made by other processes")
struct ChangesElsewhereTests {
    /// Two stores on one new file, standing for this process and another: (path, mine, theirs).
    private func twoProcesses() throws -> (String, MemoStore, MemoStore) {
        let path = temporaryStorePath()
        let mine = try MemoStore(path: path)
        try mine.loadListOrder()  // as a server does once it has started
        return (path, mine, try MemoStore(path: path))
    }

    @Test("another connection's commit is seen once taken; this connection's own writes are never seen")
    func seenOnce() throws {
        let (_, mine, theirs) = try twoProcesses()
        #expect(try !mine.hasChangesElsewhere())
        _ = try mine.create(text: "my own", now: 1, filter: nil)
        #expect(try !mine.hasChangesElsewhere())
        _ = try theirs.create(text: "theirs", now: 2, filter: nil)
        #expect(try mine.hasChangesElsewhere())
        #expect(try mine.hasChangesElsewhere(), "looking does not take")
        #expect(try mine.takeChangesElsewhere())
        #expect(try !mine.hasChangesElsewhere())
        #expect(try mine.count(filter: nil) == 2)
    }

    @Test("changes that a read followed are taken once, as moves, before anything read is told; a reset takes them all")
    func changesFollowedByAReadAreTakenOnce() throws {
        let (_, mine, theirs) = try twoProcesses()
        _ = try mine.create(text: "mine", now: 1, filter: nil)
        #expect(try mine.takeFollowedChanges(filter: nil) == nil)
        let created = try theirs.create(text: "theirs", now: 2, filter: nil).memo
        #expect(try mine.memo(at: 0, filter: nil)?.id == created.id, "a read follows the file")
        guard case .moves(let moves)? = try mine.takeFollowedChanges(filter: nil) else {
            Issue.record("the change the read followed was not taken as moves")
            return
        }
        #expect(moves.map(\.row.id) == [created.id] && moves.first?.from == nil && moves.first?.to == 0)
        #expect(try mine.takeFollowedChanges(filter: nil) == nil, "taken once")
        #expect(try mine.takeChangesElsewhere(filter: nil) == nil, "nor taken again by a catch-up")
        _ = try theirs.delete(id: created.id, now: 3, filter: nil)
        #expect(try mine.resetList(filter: nil) == 1)
        #expect(try mine.takeFollowedChanges(filter: nil) == nil, "the reset told them")
    }

    @Test("an edit starts from the stored text, not the text this process wrote last, once another changed it")
    func editAfterAnotherProcessChangedTheText() throws {
        let (_, mine, theirs) = try twoProcesses()
        let id = try mine.create(text: "one", now: 1, filter: nil).memo.id
        func appendBang(_ store: MemoStore) throws -> String {
            try store.update(id: id, baseVersion: nil, now: 5, filter: nil) { $0 + "!" }.memo.text
        }
        #expect(try appendBang(mine) == "one!")       // from the text this store wrote
        _ = try theirs.update(id: id, text: "two", baseVersion: nil, now: 3, filter: nil)
        #expect(try appendBang(mine) == "two!")       // the row moved on: read again
        #expect(try appendBang(mine) == "two!!")
        #expect(try theirs.memo(id: id)?.text == "two!!")
    }

    @Test("a change made on top of unseen changes says so, so the mediator resets the list")
    func changeFollowingOthers() throws {
        let (_, mine, theirs) = try twoProcesses()
        let first = try mine.create(text: "first", now: 1, filter: nil)
        #expect(!first.followsChangesElsewhere)
        _ = try theirs.create(text: "theirs", now: 2, filter: nil)
        let second = try mine.create(text: "second", now: 3, filter: nil)
        #expect(second.followsChangesElsewhere)
        #expect(try !mine.hasChangesElsewhere(), "the change took them")
        // A refused change leaves them for the next catch-up.
        _ = try theirs.create(text: "more of theirs", now: 4, filter: nil)
        #expect(throws: StoreError.self) { try mine.update(id: first.memo.id, text: "x", baseVersion: 9, now: 5, filter: nil) }
        #expect(try mine.hasChangesElsewhere())
    }

    @Test("commits that change nothing a front end sees (an index chunk, a checkpoint, hidden import chunks) do not count")
    func invisibleCommits() throws {
        let (_, mine, theirs) = try twoProcesses()
        _ = try theirs.create(text: "to be indexed in the background", now: 1, filter: nil)
        #expect(try mine.takeChangesElsewhere())
        #expect(try theirs.indexPendingMemos() > 0)
        theirs.checkpoint()
        #expect(try !mine.hasChangesElsewhere())
        // An import shows nothing until it is published, then counts once.
        var chunks = [[MemoStore.NewMemo(text: "imported", modifiedAt: 5)], [MemoStore.NewMemo(text: "imported too", modifiedAt: 5)]]
        _ = try theirs.importMemos(isCancelled: { false }, nextChunk: { chunks.isEmpty ? [] : chunks.removeFirst() }, didStore: { _ in
            #expect(try! !mine.hasChangesElsewhere(), "a hidden chunk is not a visible change")
        })
        #expect(try mine.takeChangesElsewhere())
        #expect(try mine.count(filter: nil) == 3)
    }

    @Test("the list orders in memory survive another process's invisible commits, and not its visible ones")
    func listOrdersKeptAcrossInvisibleCommits() throws {
        let (_, mine, theirs) = try twoProcesses()
        _ = try mine.create(text: "mine", now: 1, filter: nil)
        _ = try theirs.create(text: "theirs, indexed later", now: 2, filter: nil)
        #expect(try mine.count(filter: nil) == 2)
        let isLoaded = { mine.cache.state.withLock { $0.all != nil } }
        #expect(isLoaded())
        #expect(try theirs.indexPendingMemos() > 0)
        theirs.checkpoint()
        _ = try mine.create(text: "mine again", now: 3, filter: nil)  // this process's own change keeps them too
        #expect(isLoaded(), "an index chunk or a checkpoint elsewhere does not cost a rebuild")
        #expect(try mine.count(filter: nil) == 3)
        _ = try theirs.delete(id: try #require(try theirs.page(filter: nil, offset: 0, limit: 1).first).id, now: 4, filter: nil)
        #expect(try mine.count(filter: nil) == 2, "a visible change elsewhere is seen")
    }

    // MARK: The list order following other processes' changes

    /// Every memo of `store`'s list, newest first: (title, local id).
    /// How many times `store` read its whole list order.
    private func builds(_ store: MemoStore) -> Int { store.cache.builds.load(ordering: .relaxed) }

    private func list(_ store: MemoStore) throws -> [String] {
        try store.page(filter: nil, offset: 0, limit: 1000).map { "\($0.title) \($0.localID)" }
    }

    @Test("another process's creates, edits and deletes move in the order held in memory, without reading it again")
    func orderFollowsChangesElsewhere() throws {
        let (path, mine, theirs) = try twoProcesses()
        var ids: [String] = []
        for index in 0..<20 { ids.append(try mine.create(text: "memo \(index)", now: Int64(index), filter: nil).memo.id) }
        #expect(try mine.count(filter: nil) == 20)
        let before = builds(mine)
        _ = try theirs.create(text: "theirs", now: 5, filter: nil)                       // lands in the middle
        _ = try theirs.update(id: ids[3], text: "memo 3, edited", baseVersion: nil, now: 100, filter: nil)  // to the top
        _ = try theirs.delete(id: ids[10], now: 101, filter: nil)
        _ = try mine.create(text: "mine, after theirs", now: 50, filter: nil)           // a change of mine on top of theirs
        #expect(try list(mine) == list(try MemoStore(path: path)), "as a fresh read of the file")
        #expect(try mine.count(filter: nil) == 21)
        #expect(try mine.page(filter: nil, offset: 0, limit: 1).first?.title == "memo 3, edited")
        #expect(builds(mine) == before, "followed, not read again")
    }

    @Test("many changes elsewhere are read again whole; an import under way elsewhere is in no list until shown")
    func manyChangesAndImportsElsewhere() throws {
        let (path, mine, theirs) = try twoProcesses()
        _ = try mine.create(text: "mine", now: 1, filter: nil)
        #expect(try mine.count(filter: nil) == 1)
        var before = builds(mine)
        // Past the limit (1,000 for a short list): read again whole.
        _ = try theirs.importMemos((0..<1001).map { MemoStore.NewMemo(text: "imported \($0)", modifiedAt: Int64($0)) })
        #expect(try mine.count(filter: nil) == 1002)
        #expect(builds(mine) == before + 1)
        #expect(try list(mine) == list(try MemoStore(path: path)))
        // A hidden chunk of an import under way is no change; the import shown is followed.
        before = builds(mine)
        var chunks = [[MemoStore.NewMemo(text: "hidden until shown", modifiedAt: 7)]]
        _ = try theirs.importMemos(isCancelled: { false }, nextChunk: { chunks.isEmpty ? [] : chunks.removeFirst() }, didStore: { _ in
            _ = try! theirs.create(text: "while their import runs", now: 3000, filter: nil)
            #expect(try! mine.count(filter: nil) == 1003, "the created memo, not the hidden one")
        })
        #expect(try mine.count(filter: nil) == 1004)
        #expect(try list(mine) == list(try MemoStore(path: path)))
        #expect(builds(mine) == before, "followed, not read again")
    }

    @Test("after another process deleted more memos than are followed one by one, the order is read again once, not at every look")
    func manyDeletesElsewhereReadOnce() throws {
        let (path, mine, theirs) = try twoProcesses()
        _ = try theirs.importMemos((0..<1200).map { MemoStore.NewMemo(text: "imported \($0)", modifiedAt: Int64($0)) })
        #expect(try mine.count(filter: nil) == 1200)
        let before = builds(mine)
        for memo in try theirs.page(filter: nil, offset: 0, limit: 1100) {
            _ = try theirs.delete(id: memo.id, now: 5000, filter: nil)
        }
        #expect(try mine.count(filter: nil) == 100)
        #expect(builds(mine) == before + 1, "more than 1,000 changes: read again")
        _ = try theirs.create(text: "one more of theirs", now: 6000, filter: nil)
        #expect(try mine.count(filter: nil) == 101)
        #expect(builds(mine) == before + 1, "the deletes were seen: followed")
        #expect(try list(mine) == list(try MemoStore(path: path)))
    }
}
