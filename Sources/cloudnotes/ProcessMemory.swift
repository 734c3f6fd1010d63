import CShims
#if canImport(Glibc)
import Glibc
#endif

// MARK: - The allocator

/// How the process's memory allocator is set up before any work starts.
enum ProcessMemory {
    /// Sets glibc's malloc up for the server: at most two arenas, and freed memory kept for reuse.
    ///
    /// Each setting yields to the environment variable that glibc reads for it, so that it can still be
    /// measured against the default.
    static func configureAllocator() {
        // By default glibc gives every thread that meets a busy arena an arena of its own (up to eight per
        // core) and keeps what each one freed. The server's threads take turns (the reader, the request
        // worker, the background indexer, Swift's concurrency pool), so after a large import every arena
        // held the remains of a big burst, and the peak memory grew for no speed gained.
        set(.arenaMax, to: 2, unlessSet: "MALLOC_ARENA_MAX")
        // By default a block of 128 KB or more is mapped for itself and unmapped when freed, and the
        // threshold then rises to the largest freed block, while more than twice that, free at the top
        // of an arena, is given back to the system. Typing into a long memo allocates and frees a few
        // such blocks a keystroke (the line, the text, the reply), so each keystroke met fresh pages,
        // each a page fault, a good part of its time.
        // Up to a megabyte a block now comes from the arenas, and up to two megabytes of free memory
        // stay there for the next request.
        set(.mmapThreshold, to: 1 << 20, unlessSet: "MALLOC_MMAP_THRESHOLD_")
        set(.trimThreshold, to: 2 << 20, unlessSet: "MALLOC_TRIM_THRESHOLD_")
    }

    /// `mallopt`'s options, by their numbers in <malloc.h> (part of glibc's stable ABI).
    private enum Option: Int32 {
        case trimThreshold = -1
        case mmapThreshold = -3
        case arenaMax = -8
    }

    private static func set(_ option: Option, to value: Int32, unlessSet variable: String) {
        #if os(Linux)
        guard getenv(variable) == nil else { return }
        _ = cshims_mallopt(option.rawValue, value)
        #endif
    }
}
