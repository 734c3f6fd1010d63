import CloudNotesStore
import Logging
import Synchronization

// MARK: - Changes made by other processes

/// Looks, a few times a second, for changes that other processes committed to the store (a second
/// editor, the shell), and reports them to the run loop, which hands them to the split view between
/// two requests.
///
/// At most one report waits at a time: the split view reads the store's latest state when it catches
/// up, so changes that pile up meanwhile need no report of their own.
public final class ExternalChangeWatcher: Sendable {
    /// How often the store is asked; a change reaches the client well within a second.
    public static let interval: Duration = .milliseconds(250)

    private let store: MemoStore
    private let logger: Logger
    private let reportWaiting = Atomic(false)
    private let task = Mutex<Task<Void, Never>?>(nil)

    public init(store: MemoStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// Starts watching; `report` is called once per batch of changes, until `didHandleReport()`.
    public func start(report: @escaping @Sendable () -> Void) {
        let newTask = Task.detached(priority: .utility) { [self] in await run(report: report) }
        task.withLock { $0 = newTask }
    }

    public func stop() {
        task.withLock { $0?.cancel() }
    }

    /// The split view is about to catch up: changes from now on are reported again.
    public func didHandleReport() {
        reportWaiting.store(false, ordering: .releasing)
    }

    private func run(report: @escaping @Sendable () -> Void) async {
        let store = store
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.interval)
            guard !reportWaiting.load(ordering: .acquiring) else { continue }
            do {
                // Off the concurrency pool: the check waits while this process's own import holds the writer.
                if try await BlockingWork.run({ _ in try store.hasChangesElsewhere() }) {
                    reportWaiting.store(true, ordering: .releasing)
                    report()
                }
            } catch {
                logger.warning("cannot look for changes made by other processes: \(error)")
            }
        }
    }
}
