import CloudNotesMediator
import CloudNotesProtocol
import CloudNotesStore
import Foundation
import Synchronization

/// Collects the mediator's notifications as (method, params JSON), in order.
final class RecordingSink: NotificationSink {
    private let recorded = Mutex<[(String, JSONValue)]>([])

    func send(_ notification: some NotificationType) {
        let entry = (type(of: notification).method, JSONValue(encoding: notification))
        recorded.withLock { $0.append(entry) }
    }

    /// The notifications since the last call.
    func take() -> [(method: String, params: JSONValue)] {
        recorded.withLock { entries in
            defer { entries.removeAll() }
            return entries
        }
    }

    func methods() -> [String] { take().map(\.method) }
}

/// A mediator over an in-memory store, with a clock the test moves.
struct Fixture {
    let store: MemoStore
    let sink = RecordingSink()
    let mediator: SplitViewMediator
    let clock = TestClock()

    /// A mediator on `path`, a store file that other stores (other processes) may share; in memory without.
    init(locale: String = "en_US", path: String? = nil, discardsBlankSelection: Bool = true) throws {
        store = try path.map { try MemoStore(path: $0) } ?? MemoStore()
        let clock = self.clock
        mediator = SplitViewMediator(
            store: store, sink: sink, presenter: MemoPresenter(locale: Locale(identifier: locale), timeZone: .gmt),
            limits: ServerLimits.standard, discardsBlankSelection: discardsBlankSelection,
            clock: { clock.tick() })
    }

    @discardableResult
    func create(_ text: String) async throws -> Memo {
        try await mediator.create(CreateRequest(text: text)).memo
    }

    func titles() async throws -> [String] {
        try await mediator.list(ListRequest(limit: 1000)).rows.map(\.title)
    }
}

/// Milliseconds that move one step at each reading.
final class TestClock: Sendable {
    private let now = Mutex<Int64>(1_000_000)
    func tick() -> Int64 { now.withLock { $0 += 1; return $0 } }
}

enum ServerLimits {
    static let standard = InitializeResult.Limits(maxMessageBytes: 1 << 25, maxMemoBytes: 1 << 24, maxNestingDepth: 64, maxListLimit: 1000)
}
