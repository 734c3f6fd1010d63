import ArgumentParser
import CloudNotesStore
import Foundation
import Logging

// MARK: - What both servers do first

/// The set-up `serve` and `mcp` share: stdout kept for protocol messages, and the store opened with
/// its problems logged.
public enum StdioServing {
    /// Keeps the real stdout for protocol messages, and points file descriptor 1 at stderr so that a
    /// stray print from anywhere cannot corrupt the stream; returns the descriptor messages go to.
    public static func reserveStandardOutput() -> Int32 {
        let protocolOutput = dup(STDOUT_FILENO)
        dup2(STDERR_FILENO, STDOUT_FILENO)
        // A client that goes away makes writes fail (EPIPE), which the server handles; not a signal that kills it.
        signal(SIGPIPE, SIG_IGN)
        return protocolOutput
    }

    /// The store the options name, or exit status 2 with the reason logged.
    public static func openStore(_ options: StoreOptions, logger: Logger) throws -> MemoStore {
        let store: MemoStore
        do {
            store = try MemoStore(path: options.storePath, durability: options.durability)
        } catch {
            logger.critical("cannot open the store: \(error)")
            throw ExitCode(2)
        }
        logger.info("serving \(options.storePath)")
        for problem in MemoStore.privacyProblems(ofStoreAt: options.storePath) {
            logger.warning("\(problem)")
        }
        if store.isReadOnly {
            logger.warning("the store is read-only: memos can be read, and every change will be refused")
        }
        return store
    }
}
