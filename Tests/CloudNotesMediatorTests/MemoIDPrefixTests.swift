import CloudNotesMediator
import CloudNotesProtocol
import Testing

/// Finding a memo by the start of its id, as the shell commands do.
struct MemoIDPrefixTests {
    @Test("a whole id, its first 8 characters or its upper-case spelling find the memo")
    func uniquePrefix() async throws {
        let fixture = try Fixture()
        let memo = try await fixture.create("Groceries")
        try await fixture.create("Other")
        let id = memo.id.description
        #expect(try await fixture.mediator.memoID(matching: id) == memo.id)
        #expect(try await fixture.mediator.memoID(matching: String(id.prefix(8))) == memo.id)
        #expect(try await fixture.mediator.memoID(matching: String(id.prefix(8)).uppercased()) == memo.id)
    }

    @Test("a prefix that several memos share is refused with their ids, so the user can give more")
    func ambiguousPrefix() async throws {
        let fixture = try Fixture()
        // 17 memos over 16 hex digits: at least two share a first character.
        var ids: [String] = []
        for index in 0..<17 { ids.append(try await fixture.create("memo \(index)").id.description) }
        let shared = Dictionary(grouping: ids, by: { String($0.prefix(1)) }).first { $0.value.count > 1 }!
        do {
            _ = try await fixture.mediator.memoID(matching: shared.key)
            Issue.record("an ambiguous prefix chose a memo")
        } catch {
            #expect(error.code == .invalidParams)
            guard case .object(let data)? = error.data, case .array(let candidates)? = data["candidates"] else {
                Issue.record("no candidates in \(String(describing: error.data))")
                return
            }
            #expect(Set(candidates) == Set(shared.value.map(JSONValue.string)))
        }
    }

    @Test("no match is not found; a deleted memo does not match; a prefix that is not hex is a bad param")
    func noMatch() async throws {
        let fixture = try Fixture()
        let memo = try await fixture.create("Soon gone")
        _ = try await fixture.mediator.delete(DeleteRequest(id: memo.id))
        do {
            _ = try await fixture.mediator.memoID(matching: memo.id.description)
            Issue.record("a deleted memo matched")
        } catch {
            #expect(error.code == .memoNotFound)
        }
        for bad in ["", "xyz", "3f2a'; --", String(repeating: "a", count: 37)] {
            do {
                _ = try await fixture.mediator.memoID(matching: bad, param: "id")
                Issue.record("accepted \(bad.debugDescription)")
            } catch {
                #expect(error.code == .invalidParams)
                #expect(error.data == ["param": "id"])
            }
        }
    }
}
