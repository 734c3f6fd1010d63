import Foundation

// MARK: - One sync at a time

/// An exclusive `flock` on a file beside the store, held for a whole sync.
///
/// Two overlapping syncs of one store (the server's and the shell's, say) could publish segments out
/// of order and rewrite the head backwards. The lock is per open file, so it also keeps two syncs in
/// one process apart, and the system drops it when a process dies.
final class SyncLock {
    private let descriptor: Int32

    /// Waits for the lock of the store at `storePath` (no lock for a store in memory), giving up when
    /// the task is cancelled.
    static func acquire(for storePath: String?) async throws -> SyncLock {
        guard let storePath else { return SyncLock(descriptor: -1) }
        let descriptor = open(storePath + "-sync.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SyncError.unreachable("cannot open \(storePath)-sync.lock: \(String(cString: strerror(errno)))")
        }
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else { break }  // no locks on this file system: go on
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                close(descriptor)
                throw SyncError.cancelled
            }
        }
        return SyncLock(descriptor: descriptor)
    }

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }  // closing releases the flock
    }
}
