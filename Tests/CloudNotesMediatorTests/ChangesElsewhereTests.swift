import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesStore
import CloudNotesTestSupport
import Testing

/// A front end's copy of the list's ids, kept by applying the list notifications in order.
private struct ListCopy {
    var ids: [String]
    var resets = 0

    mutating func apply(_ sent: [(method: String, params: JSONValue)]) {
        for (method, params) in sent {
            switch method {
            case "list/didInsert":
                ids.insert(params["row"]!["id"]!.stringValue!, at: params["index"]!.intValue!)
            case "list/didUpdate":
                #expect(ids.remove(at: params["fromIndex"]!.intValue!) == params["row"]!["id"]!.stringValue!)
                ids.insert(params["row"]!["id"]!.stringValue!, at: params["toIndex"]!.intValue!)
            case "list/didRemove":
                #expect(ids.remove(at: params["index"]!.intValue!) == params["id"]!.stringValue!)
            case "list/didReset":
                resets += 1
                ids = []  // to be read again
            default:
                break
            }
        }
    }
}

/// Another process's changes reach the split view memo by memo (rule C5), so that a front end
/// showing a window of the list keeps it right without reading the list again.
@Suite("Changes made by other processes, memo by memo")
struct ChangesElsewhereMovesTests {
    /// A mediator on a store file, another process's store on the same file, and the client's copy.
    private func twoProcesses() async throws -> (Fixture, MemoStore) {
        let path = temporaryStorePath()
        let fixture = try Fixture(path: path)
        try await fixture.mediator.start()
        try fixture.store.loadListOrder()  // as the server does after start: moves are followed in it
        return (fixture, try MemoStore(path: path))
    }

    private func ids(_ fixture: Fixture, limit: Int = 1000) async throws -> [String] {
        try await fixture.mediator.list(ListRequest(limit: limit)).rows.map(\.id.description)
    }

    @Test("inserts, updates and deletes elsewhere arrive as such, with indexes that keep a copy of the list right")
    func movesKeepTheCopyRight() async throws {
        let (fixture, theirs) = try await twoProcesses()
        for text in ["a", "b", "c"] { try await fixture.create(text) }
        var copy = ListCopy(ids: try await ids(fixture))
        _ = fixture.sink.take()
        let bottom = copy.ids[2]
        _ = try theirs.create(text: "theirs", now: 5_000_000, filter: nil)
        _ = try theirs.update(id: bottom, text: "edited elsewhere", baseVersion: nil, now: 5_000_001, filter: nil)
        _ = try theirs.delete(id: copy.ids[1], now: 5_000_002, filter: nil)
        try await fixture.mediator.catchUpWithChangesElsewhere()
        let sent = fixture.sink.take()
        #expect(sent.map(\.method).prefix(3) == ["list/didInsert", "list/didUpdate", "list/didRemove"])
        copy.apply(sent)
        #expect(copy.resets == 0)
        #expect(copy.ids == (try await ids(fixture)))
        try await fixture.mediator.catchUpWithChangesElsewhere()
        #expect(fixture.sink.methods().isEmpty, "taken once")
    }

    @Test("under a search filter, memos enter and leave the filtered list; others send nothing")
    func movesUnderAFilter() async throws {
        let (fixture, theirs) = try await twoProcesses()
        let apple = try await fixture.create("apple")
        try await fixture.create("banana")
        _ = try await fixture.mediator.search(SearchRequest(query: "APP"))
        var copy = ListCopy(ids: try await ids(fixture))
        _ = fixture.sink.take()
        _ = try theirs.create(text: "pineapple", now: 5_000_000, filter: nil)
        _ = try theirs.create(text: "cherry", now: 5_000_001, filter: nil)
        _ = try theirs.update(id: apple.id.description, text: "pear", baseVersion: nil, now: 5_000_002, filter: nil)
        try await fixture.mediator.catchUpWithChangesElsewhere()
        let sent = fixture.sink.take()
        #expect(sent.map(\.method).prefix(2) == ["list/didInsert", "list/didRemove"])
        copy.apply(sent)
        #expect(copy.resets == 0)
        #expect(copy.ids == (try await ids(fixture)))
        #expect(try await fixture.titles() == ["pineapple"])
    }

    @Test("more changes than are announced one by one make one reset")
    func manyChangesReset() async throws {
        let (fixture, theirs) = try await twoProcesses()
        try await fixture.create("mine")
        _ = fixture.sink.take()
        for index in 0..<150 { _ = try theirs.create(text: "theirs \(index)", now: 5_000_000 + Int64(index), filter: nil) }
        try await fixture.mediator.catchUpWithChangesElsewhere()
        let sent = fixture.sink.take()
        #expect(sent.first?.method == "list/didReset")
        #expect(sent.first?.params == ["total": 151])
        #expect(!sent.contains { $0.method == "list/didInsert" })
    }

    @Test("a change of this process on top of unseen ones announces theirs first, then its own")
    func ownChangeAfterTheirs() async throws {
        let (fixture, theirs) = try await twoProcesses()
        let mine = try await fixture.create("mine")
        var copy = ListCopy(ids: try await ids(fixture))
        _ = fixture.sink.take()
        _ = try theirs.create(text: "theirs", now: 5_000_000, filter: nil)
        // The store takes them within the change, as when they land between the catch-up and the write.
        let change = try fixture.store.update(id: mine.id.description, text: "mine, edited", baseVersion: nil, now: 6_000_000, filter: nil)
        guard case .moves(let moves)? = change.changesElsewhere else {
            Issue.record("the change did not carry the other process's change as moves")
            return
        }
        #expect(moves.map(\.row.title) == ["theirs"])
        #expect(moves.first?.to == 0 && change.indexBefore == 1 && change.indexAfter == 0)
        copy.ids.insert(moves[0].row.id, at: 0)
        copy.ids.insert(copy.ids.remove(at: change.indexBefore!), at: change.indexAfter!)
        #expect(copy.ids == (try await ids(fixture)))
    }

    @Test("the selected memo edited elsewhere is shown again; deleted elsewhere, the selection moves")
    func selectionFollows() async throws {
        let (fixture, theirs) = try await twoProcesses()
        try await fixture.create("below")
        let selected = try await fixture.create("selected")
        _ = fixture.sink.take()
        _ = try theirs.update(id: selected.id.description, text: "selected, edited", baseVersion: nil, now: 5_000_000, filter: nil)
        try await fixture.mediator.catchUpWithChangesElsewhere()
        #expect(fixture.sink.methods() == ["list/didUpdate", "detail/didShow"])
        _ = try theirs.delete(id: selected.id.description, now: 5_000_001, filter: nil)
        try await fixture.mediator.catchUpWithChangesElsewhere()
        let sent = fixture.sink.take()
        #expect(sent.map(\.method) == ["list/didRemove", "selection/didChange", "detail/didShow"])
        #expect(sent[2].params["memo"]?["title"] == "below")
    }

    @Test("random changes elsewhere, caught up now and then, keep a copy of the list right", arguments: [1, 2, 3] as [UInt64])
    func randomChanges(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let (fixture, theirs) = try await twoProcesses()
        for index in 0..<20 { try await fixture.create("memo \(index)") }
        var copy = ListCopy(ids: try await ids(fixture))
        _ = fixture.sink.take()
        var now: Int64 = 5_000_000
        for _ in 0..<60 {
            let live = try await ids(fixture)
            now += Int64.random(in: -3...3, using: &random) + 1
            switch Int.random(in: 0..<4, using: &random) {
            case 0: _ = try theirs.create(text: "new \(now)", now: now, filter: nil)
            case 1 where !live.isEmpty: _ = try theirs.delete(id: live.randomElement(using: &random)!, now: now, filter: nil)
            case 3 where !live.isEmpty: try await fixture.create("mine \(now)")
            default:
                if let id = live.randomElement(using: &random) {
                    _ = try theirs.update(id: id, text: "edited \(now)", baseVersion: nil, now: now, filter: nil)
                }
            }
            if Bool.random(using: &random) {
                try await fixture.mediator.catchUpWithChangesElsewhere()
                copy.apply(fixture.sink.take())
                #expect(copy.resets == 0)
                #expect(copy.ids == (try await ids(fixture)))
            }
        }
    }
}
