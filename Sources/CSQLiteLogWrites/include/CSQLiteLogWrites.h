#ifndef CSQLITE_LOG_WRITES_H
#define CSQLITE_LOG_WRITES_H

#include <stdint.h>

/// Makes the process's default SQLite VFS one that writes each write-ahead log's frames with one
/// `pwrite` per transaction instead of two per page (see LogWrites.c), and that gives every checkpoint
/// and every restart of a log its turn, in this process and between CloudNotes processes, against
/// SQLite's WAL-reset race (see CheckpointTurns.c). Idempotent; returns an SQLite result code.
int cloudnotes_combine_log_writes(void);

/// For tests: `hook` runs inside each checkpoint of this process, after it has read a log header that
/// changed and before it looks at how much of the log is copied (the race's window), with the
/// checkpointing connection's database file (its `SQLITE_FCNTL_FILE_POINTER`). NULL removes it.
void cloudnotes_set_checkpoint_window_hook(void (*hook)(void *context, void *file), void *context);

/// What a connection's log was asked to write and what it wrote, for tests.
typedef struct {
    /// `xWrite` calls SQLite made on the log.
    uint64_t writesAsked;
    /// Writes made to the log's file.
    uint64_t writesMade;
} cloudnotes_log_write_counts;

/// Reads the counts of `connection`'s log (an `sqlite3 *`, once it has opened one); an SQLite result code.
int cloudnotes_log_write_counts_of(void *connection, cloudnotes_log_write_counts *counts);

#endif
