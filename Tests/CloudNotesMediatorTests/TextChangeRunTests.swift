import CloudNotesMediator
import CloudNotesProtocol
import GRDB
import Synchronization
import Testing

@testable import CloudNotesStore

/// The replies of a burst, by the request's index.
private final class Answers: Sendable {
    private let replies = Mutex<[Int: Result<any ResponseType, ResponseError>]>([:])

    var answer: SplitViewMediator.BurstAnswer {
        { index, reply in self.replies.withLock { $0[index] = reply } }
    }

    func version(at index: Int) -> Int64? {
        guard case .success(let reply as MemoResult) = replies.withLock({ $0[index] }) else { return nil }
        return reply.memo.version
    }

    func errorCode(at index: Int) -> ErrorCode? {
        guard case .failure(let error) = replies.withLock({ $0[index] }) else { return nil }
        return error.code
    }

    var count: Int { replies.withLock { $0.count } }
}

@Suite("Runs of text changes in the split view")
struct TextChangeRunTests {
    @Test("when the store fails a run, each change goes again alone: only the change that fails is refused")
    func storeFailureRetriesEachAlone() async throws {
        let fixture = try Fixture()
        let memo = try await fixture.create("kept")  // selected: its changes go together
        // The run writes the memo's row once, as its last change left it: that is the write that fails.
        try await fixture.store.writer.write { db in
            try db.execute(sql: """
                CREATE TEMP TRIGGER refuse BEFORE UPDATE OF text ON memo WHEN new.text = CAST('boom' AS BLOB)
                BEGIN SELECT RAISE(ABORT, 'boom'); END
                """)
        }
        _ = fixture.sink.take()
        let answers = Answers()
        let texts = ["typed", "more", "boom"]
        await fixture.mediator.changeTexts(
            texts.map { UpdateRequest(id: memo.id, text: $0, baseVersion: nil) }, answer: answers.answer)

        #expect(answers.count == 3)
        // As one at a time: the changes before the failing one are made.
        #expect(answers.version(at: 0) == 2)
        #expect(answers.version(at: 1) == 3)
        #expect(answers.errorCode(at: 2) == .storeUnavailable)
        let stored = try #require(try fixture.store.memo(id: memo.id.description))
        #expect((stored.text, stored.version) == ("more", 3))
        let after = Answers()
        await fixture.mediator.changeTexts([UpdateRequest(id: memo.id, text: "after", baseVersion: nil)], answer: after.answer)
        #expect(after.version(at: 0) == 4)
        // After a failure of the store, the next change also resets the list (the store cannot tell
        // what of other processes' changes the client then missed): once for the run, once for "boom".
        #expect(fixture.sink.methods() == ["list/didReset", "list/didUpdate", "list/didUpdate", "list/didReset", "list/didUpdate"])
    }
}
