// What a write-ahead log gathers, and when it goes to the file (the rules are in LogWrites.c).

#include "LogFile.h"

#include <stdlib.h>
#include <string.h>

int writeThrough(LogFile *log, const unsigned char *bytes, int amount, sqlite3_int64 offset) {
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

int gather(LogFile *log, const void *bytes, int amount, sqlite3_int64 offset) {
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

int isCommitFrameHeader(const void *bytes, int amount) {
    if (amount != FRAME_HEADER_SIZE) return 0;
    const unsigned char *header = bytes;
    return (header[4] | header[5] | header[6] | header[7]) != 0;
}
