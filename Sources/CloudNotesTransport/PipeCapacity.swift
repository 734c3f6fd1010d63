#if canImport(Glibc)
import Glibc
#endif

// MARK: - Pipe capacity

/// Enlarges the kernel's buffer of a pipe the server reads or writes, so that a long message crosses
/// it in one go.
///
/// Linux gives a pipe 64 KB. A keystroke in a long memo is a long request and a reply of twice its
/// length (the text, and its body beside it); through the default the writer stops until the reader
/// has drained the pipe, several times a message, and each turn wakes both processes. At
/// `preferredBytes` each message of such a memo passes in one write, which made typing in it quicker,
/// and a megabyte did no better (`bench/FINDINGS.md`).
///
/// Not more: a pipe's pages count against its user's `/proc/sys/fs/pipe-user-pages-soft` (64 MB by
/// default), past which Linux gives every new pipe of that user two pages. At `preferredBytes` a
/// user reaches it with about 120 servers at once; at a megabyte, the most an unprivileged process may
/// ask for, with 30.
public enum PipeCapacity {
    /// The capacity asked for.
    public static let preferredBytes = 1 << 18

    /// Raises the capacity of `fileDescriptor`'s pipe to `bytes` if it is lower; returns the capacity
    /// it has then, or nil when it is not a pipe (a file, a terminal) or the system has no such setting.
    ///
    /// A refusal (the user's pipes already hold `/proc/sys/fs/pipe-user-pages-soft`) leaves the pipe
    /// as it was: it only costs speed.
    @discardableResult
    public static func enlarge(fileDescriptor: Int32, to bytes: Int = preferredBytes) -> Int? {
        #if os(Linux)
        var status = stat()
        guard fstat(fileDescriptor, &status) == 0, status.st_mode & S_IFMT == S_IFIFO else { return nil }
        let current = fcntl(fileDescriptor, getPipeSize)
        guard current >= 0 else { return nil }
        if current >= bytes { return Int(current) }
        let enlarged = fcntl(fileDescriptor, setPipeSize, Int32(clamping: bytes))
        return Int(enlarged >= 0 ? enlarged : current)
        #else
        return nil
        #endif
    }

    /// `F_SETPIPE_SZ` and `F_GETPIPE_SZ` of <fcntl.h> (Linux 2.6.35), which Swift's Glibc module leaves out.
    private static let setPipeSize: Int32 = 1031
    private static let getPipeSize: Int32 = 1032
}
