import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesStore
import CloudNotesTestSupport
import Testing

/// A client with no panes (`cloudnotes mcp`): it searches without a list filter, and reads without
/// selecting, and its selection never discards a memo.
@Suite("A client with no panes")
struct PanelessClientTests {
    @Test("find pages through the matches and leaves the list's filter and the panes as they were")
    func findLeavesTheList() async throws {
        let fixture = try Fixture()
        for n in 0..<5 { try await fixture.create("match \(n)") }
        try await fixture.create("other")
        _ = fixture.sink.take()
        let first = try await fixture.mediator.find(query: "MATCH", offset: 0, limit: 2)
        let rest = try await fixture.mediator.find(query: "match", offset: 2, limit: 10)
        #expect(first.total == 5 && rest.total == 5)
        #expect((first.rows + rest.rows).map(\.title) == (0..<5).reversed().map { "match \($0)" })
        #expect(fixture.sink.take().isEmpty)
        #expect(try await fixture.mediator.list(ListRequest()).total == 6)
    }

    @Test("memo(_:) reads a memo without selecting it")
    func readWithoutSelecting() async throws {
        let fixture = try Fixture()
        let older = try await fixture.create("older")
        try await fixture.create("newer")
        _ = fixture.sink.take()
        #expect(try await fixture.mediator.memo(older.id).text == "older")
        #expect(fixture.sink.take().isEmpty)
        await #expect(throws: ResponseError.self) { try await fixture.mediator.memo(MemoID("00000000-0000-4000-8000-000000000000")!) }
    }

    @Test("without rule S5, a blank memo another process made survives this client's selection moving on",
          arguments: [(false, 2), (true, 1)])
    func blankSurvives(_ discards: Bool, _ memosLeft: Int) async throws {
        let path = temporaryStorePath()
        let fixture = try Fixture(path: path, discardsBlankSelection: discards)
        try await fixture.mediator.start()
        let editor = try MemoStore(path: path)
        _ = try editor.create(text: "", now: 5_000_000, filter: nil)  // a person about to type in their editor
        try await fixture.mediator.catchUpWithChangesElsewhere()  // selected here: nothing else is
        try await fixture.create("written by the assistant")
        #expect(try await fixture.mediator.list(ListRequest()).total == memosLeft)
    }
}
