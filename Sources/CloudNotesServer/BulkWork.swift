import Synchronization

// MARK: - Bulk work under way

/// The long writers under way (syncs, imports), so that the background indexer stays out of their way.
///
/// The store has one write lock. The indexer takes it for a chunk at a time whenever the client is
/// quiet, and a client waiting for a sync is quiet: the two took turns at the lock, and on two CPUs a
/// first sync took more than twice as long. Searches are right without the
/// index (they read the texts it lacks), so the indexer waits until the bulk work is done.
final class BulkWork: Sendable {
    private let underWay = Atomic(0)

    /// Whether a sync or an import is running.
    var isUnderWay: Bool { underWay.load(ordering: .acquiring) > 0 }

    /// Runs `body`, counted as bulk work until it ends.
    func run<T, E: Error>(_ body: () async throws(E) -> T) async throws(E) -> T {
        underWay.add(1, ordering: .releasing)
        defer { underWay.subtract(1, ordering: .releasing) }
        return try await body()
    }
}
