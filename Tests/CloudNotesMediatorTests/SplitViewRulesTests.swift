import CloudNotesMediator
import CloudNotesProtocol
import Testing

@Suite("Split-view rules")
struct SplitViewRulesTests {
    @Test("rule S1: start selects and shows the newest memo, or clears the detail")
    func start() async throws {
        let empty = try Fixture()
        try await empty.mediator.start()
        #expect(empty.sink.methods() == ["detail/didClear"])

        let fixture = try Fixture()
        _ = try fixture.store.create(text: "old", now: 1, filter: nil)
        let newest = try fixture.store.create(text: "new", now: 2, filter: nil).memo
        try await fixture.mediator.start()
        let sent = fixture.sink.take()
        #expect(sent.map(\.method) == ["selection/didChange", "detail/didShow"])
        #expect(sent[0].params == ["id": .string(newest.id), "index": 0])
        #expect(sent[1].params["editable"] == true)
    }

    @Test("rule S2: create inserts at 0 and shows it; under a filter it resets the list instead")
    func create() async throws {
        let fixture = try Fixture()
        try await fixture.create("first")
        _ = fixture.sink.take()
        let memo = try await fixture.create("second")
        let sent = fixture.sink.take()
        #expect(sent.map(\.method) == ["list/didInsert", "selection/didChange", "detail/didShow"])
        #expect(sent[0].params["index"] == 0)
        #expect(sent[2].params["memo"]?["id"] == .string(memo.id.description))

        _ = try await fixture.mediator.search(SearchRequest(query: "first"))
        _ = fixture.sink.take()
        try await fixture.create("third")
        let underFilter = fixture.sink.take()
        #expect(underFilter.map(\.method) == ["list/didReset", "selection/didChange", "detail/didShow"])
        #expect(underFilter[0].params == ["total": 3])
        #expect(try await fixture.titles() == ["third", "second", "first"])
    }

    @Test("rule S3: update keeps the memo, moves it to 0 in one list/didUpdate, and refuses a stale baseVersion")
    func update() async throws {
        let fixture = try Fixture()
        let bottom = try await fixture.create("bottom")
        try await fixture.create("top")
        _ = fixture.sink.take()
        let updated = try await fixture.mediator.update(UpdateRequest(id: bottom.id, text: "bottom!", baseVersion: 1)).memo
        #expect(updated.id == bottom.id && updated.version == 2)
        let sent = fixture.sink.take()
        #expect(sent.first?.method == "list/didUpdate")
        #expect(sent.first?.params["fromIndex"] == 1 && sent.first?.params["toIndex"] == 0)
        #expect(sent.filter { $0.method.hasPrefix("list/") }.count == 1)
        #expect(try await fixture.titles() == ["bottom!", "top"])
        do {
            _ = try await fixture.mediator.update(UpdateRequest(id: bottom.id, text: "lost?", baseVersion: 1))
            Issue.record("a stale update was accepted")
        } catch {
            #expect(error.code == .versionConflict)
            #expect(error.data?["memo"]?["text"] == "bottom!")
            #expect(error.data?["memo"]?["version"] == 2)
        }
        #expect(fixture.sink.take().isEmpty)
    }

    @Test("rule S4: deleting the selection selects the memo at the same index, or the one above, or clears")
    func delete() async throws {
        let fixture = try Fixture()
        let c = try await fixture.create("c")
        let b = try await fixture.create("b")
        let a = try await fixture.create("a")  // list: a b c, a selected
        _ = try await fixture.mediator.select(SelectRequest(id: b.id))
        _ = fixture.sink.take()
        let afterMiddle = try await fixture.mediator.delete(DeleteRequest(id: b.id))
        #expect(afterMiddle.selected?.id == c.id)  // same index
        #expect(fixture.sink.methods() == ["list/didRemove", "selection/didChange", "detail/didShow"])
        let afterBottom = try await fixture.mediator.delete(DeleteRequest(id: c.id))
        #expect(afterBottom.selected?.id == a.id)  // bottom row: the one above
        _ = fixture.sink.take()
        let afterLast = try await fixture.mediator.delete(DeleteRequest(id: a.id))
        #expect(afterLast.selected == nil)
        let sent = fixture.sink.take()
        #expect(sent.map(\.method) == ["list/didRemove", "selection/didChange", "detail/didClear"])
        #expect(sent[1].params == ["id": nil, "index": nil])
    }

    @Test("rule S4: deleting another memo leaves the selection, announcing its new index")
    func deleteOther() async throws {
        let fixture = try Fixture()
        let older = try await fixture.create("older")
        let newer = try await fixture.create("newer")
        _ = try await fixture.mediator.select(SelectRequest(id: older.id))
        _ = fixture.sink.take()
        let result = try await fixture.mediator.delete(DeleteRequest(id: newer.id))
        #expect(result.selected?.id == older.id)
        let sent = fixture.sink.take()
        #expect(sent.map(\.method) == ["list/didRemove", "selection/didChange"])
        #expect(sent[1].params == ["id": .string(older.id.description), "index": 0])
    }

    @Test("rule S5: a blank memo is discarded when the selection moves or another memo is created")
    func blankDiscarded() async throws {
        let fixture = try Fixture()
        let kept = try await fixture.create("kept")
        let blank = try await fixture.create("  \n ")
        _ = fixture.sink.take()
        _ = try await fixture.mediator.select(SelectRequest(id: kept.id))
        let sent = fixture.sink.take()
        #expect(sent.first?.method == "list/didRemove")
        #expect(sent.first?.params["id"] == .string(blank.id.description))
        #expect(try await fixture.titles() == ["kept"])

        try await fixture.create("")
        _ = fixture.sink.take()
        try await fixture.create("next")
        #expect(fixture.sink.methods().first == "list/didRemove")
        #expect(try await fixture.titles() == ["next", "kept"])
    }

    @Test("rule S6: under a filter, memos enter and leave the list as they start and stop matching")
    func filterFollowsChanges() async throws {
        let fixture = try Fixture()
        let apple = try await fixture.create("apple pie")
        let pear = try await fixture.create("pear tart")
        let search = try await fixture.mediator.search(SearchRequest(query: "apple"))
        #expect(search.total == 1)
        // The selected pear left the filtered list: still selected, index null.
        #expect(fixture.sink.take().last?.params == ["id": .string(pear.id.description), "index": nil])
        _ = try await fixture.mediator.update(UpdateRequest(id: pear.id, text: "apple tart"))
        #expect(fixture.sink.take().first?.method == "list/didInsert")
        _ = try await fixture.mediator.update(UpdateRequest(id: apple.id, text: "cherry pie"))
        let left = fixture.sink.take()
        #expect(left.first?.method == "list/didRemove")
        #expect(try await fixture.titles() == ["apple tart"])
        _ = try await fixture.mediator.search(SearchRequest(query: ""))
        #expect(try await fixture.titles() == ["cherry pie", "apple tart"])
    }

    @Test("a memo without a title shows a localized placeholder")
    func placeholder() async throws {
        let korean = try Fixture(locale: "ko_KR")
        #expect(try await korean.create("\n\n").title == "새로운 메모")
        let english = try Fixture()
        #expect(try await english.create("").title == "New Memo")
    }

    @Test("list params out of range are refused, naming the param")
    func listBounds() async throws {
        let fixture = try Fixture()
        for request in [ListRequest(offset: -1), ListRequest(limit: 0), ListRequest(limit: 1_000_000_000_000)] {
            do {
                _ = try await fixture.mediator.list(request)
                Issue.record("accepted \(request)")
            } catch {
                #expect(error.code == .invalidParams)
            }
        }
    }

    @Test("an unknown memo id is reported as not found")
    func unknownMemo() async throws {
        let fixture = try Fixture()
        do {
            _ = try await fixture.mediator.select(SelectRequest(id: MemoID()))
            Issue.record("selected a memo that does not exist")
        } catch {
            #expect(error.code == .memoNotFound)
        }
    }
}
