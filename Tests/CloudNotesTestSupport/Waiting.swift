import Foundation
import Synchronization

// MARK: - Waiting in tests

/// Whether `condition` came to hold within `timeout`, looked at every 5 ms.
public func waitUntil(timeout: Duration = .seconds(10), _ condition: () throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { return false }
        try await Task.sleep(for: .milliseconds(5))
    }
    return true
}

/// Runs `body` on a thread of its own, for work that blocks (a writer waiting for the write lock): the
/// concurrency pool may have two threads only.
public func runOnThread(_ body: @escaping @Sendable () throws -> Void) -> ThreadRun {
    let run = ThreadRun()
    Thread.detachNewThread {
        let error: (any Error)?
        do {
            try body()
            error = nil
        } catch let thrown {
            error = thrown
        }
        run.finish(error)
    }
    return run
}

/// The end of a `runOnThread`: what its body threw.
public final class ThreadRun: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<(any Error)?>(nil)

    fileprivate func finish(_ error: (any Error)?) {
        failure.withLock { $0 = error }
        done.signal()
    }

    /// Waits up to `seconds` for the body to return, and throws what it threw; `ThreadRunTimedOut`
    /// when it has not returned by then (a deadlock fails the test instead of hanging the run).
    public func wait(seconds: Double = 60) throws {
        guard done.wait(timeout: .now() + seconds) == .success else { throw ThreadRunTimedOut() }
        if let error = failure.withLock({ $0 }) { throw error }
    }
}

public struct ThreadRunTimedOut: Error {}
