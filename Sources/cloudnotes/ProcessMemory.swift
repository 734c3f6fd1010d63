#if canImport(Glibc)
import Glibc
#endif

// MARK: - The allocator's arenas

/// How the process's memory allocator is set up before any work starts.
enum ProcessMemory {
    /// Lets glibc's malloc keep at most two arenas.
    ///
    /// By default glibc gives every thread that meets a busy arena an arena of its own (up to eight per
    /// core) and keeps what each one freed. The server's threads take turns (the reader, the request
    /// worker, the background indexer, Swift's concurrency pool), so after a large import every arena
    /// held the remains of a big burst, and the peak memory grew by about 6 MB for no speed gained:
    /// measured with `bench/run` (peak RSS) and with `MALLOC_ARENA_MAX`, which this is the default for
    /// and which still overrides it.
    static func limitAllocatorArenas() {
        #if canImport(Glibc)
        // `mallopt` is declared in <malloc.h>, which Swift's Glibc module leaves out; its symbol and
        // the option's number (M_ARENA_MAX = -8) are part of glibc's stable ABI.
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        guard getenv("MALLOC_ARENA_MAX") == nil, let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt")
        else { return }
        _ = unsafeBitCast(symbol, to: Mallopt.self)(-8, 2)
        #endif
    }
}
