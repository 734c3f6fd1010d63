// The write-ahead log's file as the VFS wraps it (LogWrites.c), and how it gathers writes (LogGathering.c).

#ifndef CLOUDNOTES_LOG_FILE_H
#define CLOUDNOTES_LOG_FILE_H

#include "CSQLiteLogWrites.h"

#include <sqlite3.h>

enum {
    FRAME_HEADER_SIZE = 24,
    // What a transaction gathers before it is written anyway (a chunk of an import, for example).
    GATHER_LIMIT = 1 << 20,
    // The most SQLite's own file writes in one call: its Unix VFS keeps the low 17 bits of a write's
    // length (it never writes more than a 64 KB page and its header), so this is 128 KB less a page.
    LARGEST_WRITE = 0x1ffff & ~4095,
    // What a log keeps between transactions: enough for a keystroke in a long memo.
    SMALL_CAPACITY = 256 * 1024,
    // The log's write lock, the first of the shared-memory locks (WAL_WRITE_LOCK in SQLite's wal.c).
    LOG_WRITE_LOCK = 0,
    // The checkpoint lock (WAL_CKPT_LOCK), which every checkpoint takes alone and exclusively before it
    // reads the log's header, and holds to its end.
    CHECKPOINT_LOCK = 1,
    // Read marks 1 to 4 (WAL_READ_LOCK(1) and WAL_NREADER - 1), which a restart of the log locks
    // together, exclusively: only a restart (walRestartLog) and a RESTART or TRUNCATE checkpoint,
    // which restarts the log itself, ask for them so (see CheckpointTurns.c).
    FIRST_RESTART_LOCK = 4,
    RESTART_LOCK_COUNT = 4,
    // The file control that reads a connection's counts ("CN" and a number SQLite does not use).
    COUNTS_FILE_CONTROL = 0x434E0001,
};

struct DatabaseFile;

/// A write-ahead log: SQLite's own file, and the bytes gathered for it.
typedef struct {
    sqlite3_file base;
    /// SQLite's own file, in the memory after this struct.
    sqlite3_file *real;
    unsigned char *gathered;
    int count;
    int capacity;
    /// Where the gathered bytes go in the file.
    sqlite3_int64 offset;
    /// The last write was a commit frame's header: its page, the next write, ends the transaction.
    int commitPageNext;
    /// The database file whose connection opened this log.
    struct DatabaseFile *database;
    cloudnotes_log_write_counts counts;
} LogFile;

/// Writes `amount` bytes through SQLite's own file, in pieces it takes whole.
int writeThrough(LogFile *log, const unsigned char *bytes, int amount, sqlite3_int64 offset);
/// Writes what is gathered, and empties it.
int writeGathered(LogFile *log);
/// Adds `bytes` to what is gathered, writing that first if they do not continue it or would not fit.
int gather(LogFile *log, const void *bytes, int amount, sqlite3_int64 offset);
/// Whether a write is the header of a commit frame (one that holds the database's size).
int isCommitFrameHeader(const void *bytes, int amount);

#endif
