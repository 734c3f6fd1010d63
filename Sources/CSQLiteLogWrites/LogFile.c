// A write-ahead log's file: writes gathered in memory and given to the file in one write when the
// transaction commits (the rules are in LogWrites.c).

#include "LogFiles.h"

#include <stdlib.h>
#include <string.h>

/// Writes `amount` bytes through SQLite's own file, in pieces it takes whole.
static int writeThrough(LogFile *log, const unsigned char *bytes, int amount, sqlite3_int64 offset) {
    while (amount > 0) {
        int piece = amount < LARGEST_WRITE ? amount : LARGEST_WRITE;
        log->counts.writesMade += 1;
        int rc = log->real->pMethods->xWrite(log->real, bytes, piece, offset);
        if (rc != SQLITE_OK) return rc;
        bytes += piece;
        offset += piece;
        amount -= piece;
    }
    return SQLITE_OK;
}

int writeGathered(LogFile *log) {
    if (log->count == 0) return SQLITE_OK;
    int count = log->count;
    // Emptied first: after a failure SQLite rolls the transaction back and writes its frames again.
    log->count = 0;
    int rc = writeThrough(log, log->gathered, count, log->offset);
    // An import's megabyte is not kept for keystrokes.
    if (log->capacity > SMALL_CAPACITY) {
        free(log->gathered);
        log->gathered = NULL;
        log->capacity = 0;
    }
    return rc;
}

/// Adds `bytes` to what is gathered, writing that first if they do not continue it or would not fit.
static int gather(LogFile *log, const void *bytes, int amount, sqlite3_int64 offset) {
    if (log->count > 0 && (offset != log->offset + log->count || log->count + amount > GATHER_LIMIT)) {
        int rc = writeGathered(log);
        if (rc != SQLITE_OK) return rc;
    }
    if (amount > GATHER_LIMIT) return writeThrough(log, bytes, amount, offset);
    if (log->count + amount > log->capacity) {
        int capacity = log->capacity ? log->capacity : 64 * 1024;
        while (capacity < log->count + amount) capacity *= 2;
        unsigned char *grown = realloc(log->gathered, (size_t)capacity);
        if (!grown) {
            int rc = writeGathered(log);
            return rc != SQLITE_OK ? rc : writeThrough(log, bytes, amount, offset);
        }
        log->gathered = grown;
        log->capacity = capacity;
    }
    if (log->count == 0) log->offset = offset;
    memcpy(log->gathered + log->count, bytes, (size_t)amount);
    log->count += amount;
    return SQLITE_OK;
}

static int isCommitFrameHeader(const void *bytes, int amount) {
    if (amount != FRAME_HEADER_SIZE) return 0;
    const unsigned char *header = bytes;
    return (header[4] | header[5] | header[6] | header[7]) != 0;
}

// MARK: - A log's methods

static int logWrite(sqlite3_file *base, const void *bytes, int amount, sqlite3_int64 offset) {
    LogFile *log = (LogFile *)base;
    log->counts.writesAsked += 1;
    int endsCommit = log->commitPageNext;
    log->commitPageNext = isCommitFrameHeader(bytes, amount);
    int rc = gather(log, bytes, amount, offset);
    if (rc != SQLITE_OK) return rc;
    return endsCommit ? writeGathered(log) : SQLITE_OK;
}

static int logClose(sqlite3_file *base) {
    LogFile *log = (LogFile *)base;
    int rc = writeGathered(log);
    int closed = log->real->pMethods->xClose(log->real);
    if (log->database && log->database->log == log) log->database->log = NULL;
    free(log->gathered);
    log->gathered = NULL;
    log->capacity = 0;
    return rc != SQLITE_OK ? rc : closed;
}

// The other methods write what is gathered, then are SQLite's own.
#define GATHERED_WRITTEN(log) \
    LogFile *log = (LogFile *)base; \
    int gatheredRC = writeGathered(log); \
    if (gatheredRC != SQLITE_OK) return gatheredRC;

static int logRead(sqlite3_file *base, void *bytes, int amount, sqlite3_int64 offset) {
    GATHERED_WRITTEN(log)
    return log->real->pMethods->xRead(log->real, bytes, amount, offset);
}

static int logTruncate(sqlite3_file *base, sqlite3_int64 size) {
    GATHERED_WRITTEN(log)
    return log->real->pMethods->xTruncate(log->real, size);
}

static int logSync(sqlite3_file *base, int flags) {
    GATHERED_WRITTEN(log)
    return log->real->pMethods->xSync(log->real, flags);
}

static int logFileSize(sqlite3_file *base, sqlite3_int64 *size) {
    GATHERED_WRITTEN(log)
    return log->real->pMethods->xFileSize(log->real, size);
}

static int logLock(sqlite3_file *base, int level) {
    GATHERED_WRITTEN(log)
    return log->real->pMethods->xLock(log->real, level);
}

static int logUnlock(sqlite3_file *base, int level) {
    GATHERED_WRITTEN(log)
    return log->real->pMethods->xUnlock(log->real, level);
}

static int logCheckReservedLock(sqlite3_file *base, int *result) {
    GATHERED_WRITTEN(log)
    return log->real->pMethods->xCheckReservedLock(log->real, result);
}

static int logFileControl(sqlite3_file *base, int op, void *argument) {
    GATHERED_WRITTEN(log)
    return log->real->pMethods->xFileControl(log->real, op, argument);
}

static int logSectorSize(sqlite3_file *base) {
    LogFile *log = (LogFile *)base;
    return log->real->pMethods->xSectorSize(log->real);
}

static int logDeviceCharacteristics(sqlite3_file *base) {
    LogFile *log = (LogFile *)base;
    return log->real->pMethods->xDeviceCharacteristics(log->real);
}

// Version 1: SQLite maps shared memory and memory-maps pages through the database file, never the log.
const sqlite3_io_methods logMethods = {
    .iVersion = 1,
    .xClose = logClose,
    .xRead = logRead,
    .xWrite = logWrite,
    .xTruncate = logTruncate,
    .xSync = logSync,
    .xFileSize = logFileSize,
    .xLock = logLock,
    .xUnlock = logUnlock,
    .xCheckReservedLock = logCheckReservedLock,
    .xFileControl = logFileControl,
    .xSectorSize = logSectorSize,
    .xDeviceCharacteristics = logDeviceCharacteristics,
};
