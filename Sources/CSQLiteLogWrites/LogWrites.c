// A VFS over SQLite's default one whose write-ahead logs gather a transaction's writes in memory and
// give them to the file in one write when it commits.
//
// Why: SQLite writes each frame of the log with two `pwrite`s, its 24-byte header and then its page,
// so a keystroke in a long memo made dozens of system calls, each also touching the page-cache pages
// that the misaligned frames straddle. One write of the same bytes takes a fraction of the time.
//
// When the bytes reach the file follows SQLite's own rules for the log
// (https://www.sqlite.org/fileformat2.html#walformat, https://www.sqlite.org/walformat.html):
// - A transaction commits with the frame whose header holds the database's size in pages (bytes 4-7;
//   zero in every other frame). That frame's page is the transaction's last write, and it goes to the
//   file with everything gathered before it, before SQLite publishes the commit in the shared index.
//   So a commit that returns is in the file: it survives the process being killed, other connections
//   and processes read it, and a failed write (a full disk) fails the commit, which SQLite rolls back.
// - Anything else SQLite asks of the log (a read, a sync, its size, a truncation, closing it, a file
//   control) first writes what is gathered, and so does a write that does not continue it: SQLite
//   never sees the file differ from what it wrote.
// - A transaction that ends without committing (rolled back after its frames spilled) leaves its
//   gathered frames to be written when the connection gives up the log's write lock, which SQLite takes
//   through the database file: so no connection holds gathered bytes while another may write the log.
// Database files are wrapped to see that lock go, and to give checkpoints and restarts of the log their
// turns (CheckpointTurns.c); everything else is SQLite's own.

#include "CSQLiteLogWrites.h"
#include "CheckpointTurns.h"
#include "LogFile.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

static sqlite3_vfs *realVFS;

// MARK: - Files

/// A database file: SQLite's own, and the log its connection opened.
typedef struct DatabaseFile {
    sqlite3_file base;
    sqlite3_file *real;
    LogFile *log;
    /// The turns of this process's connections to the same file; NULL when they could not be had.
    FileTurns *turns;
    /// This file's connection holds the checkpoint lock: it runs a checkpoint.
    int checkpointing;
    /// This file's connection holds the read marks' locks of a restart.
    int holdsRestartLocks;
} DatabaseFile;

// MARK: - The race's window, for tests

static struct {
    pthread_mutex_t mutex;
    void (*hook)(void *, void *);
    void *context;
} window = {.mutex = PTHREAD_MUTEX_INITIALIZER};

static int isRestartLock(int offset, int count) {
    return offset == FIRST_RESTART_LOCK && count == RESTART_LOCK_COUNT;
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
static const sqlite3_io_methods logMethods = {
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

// MARK: - A database file's methods: SQLite's own, and the log's write lock watched

#define REAL(base) (((DatabaseFile *)(base))->real)

static int databaseClose(sqlite3_file *base) {
    DatabaseFile *database = (DatabaseFile *)base;
    // SQLite closes a connection's log first; should it not, the log forgets this file.
    if (database->log) database->log->database = NULL;
    turnsLeave(database->turns);
    database->turns = NULL;
    return database->real->pMethods->xClose(database->real);
}
static int databaseRead(sqlite3_file *base, void *bytes, int amount, sqlite3_int64 offset) {
    return REAL(base)->pMethods->xRead(REAL(base), bytes, amount, offset);
}
static int databaseWrite(sqlite3_file *base, const void *bytes, int amount, sqlite3_int64 offset) {
    return REAL(base)->pMethods->xWrite(REAL(base), bytes, amount, offset);
}
static int databaseTruncate(sqlite3_file *base, sqlite3_int64 size) {
    return REAL(base)->pMethods->xTruncate(REAL(base), size);
}
static int databaseSync(sqlite3_file *base, int flags) { return REAL(base)->pMethods->xSync(REAL(base), flags); }
static int databaseFileSize(sqlite3_file *base, sqlite3_int64 *size) {
    return REAL(base)->pMethods->xFileSize(REAL(base), size);
}
static int databaseLock(sqlite3_file *base, int level) { return REAL(base)->pMethods->xLock(REAL(base), level); }
static int databaseUnlock(sqlite3_file *base, int level) { return REAL(base)->pMethods->xUnlock(REAL(base), level); }
static int databaseCheckReservedLock(sqlite3_file *base, int *result) {
    return REAL(base)->pMethods->xCheckReservedLock(REAL(base), result);
}
static int databaseFileControl(sqlite3_file *base, int op, void *argument) {
    DatabaseFile *database = (DatabaseFile *)base;
    if (op != COUNTS_FILE_CONTROL) return database->real->pMethods->xFileControl(database->real, op, argument);
    if (!database->log) return SQLITE_NOTFOUND;
    *(cloudnotes_log_write_counts *)argument = database->log->counts;
    return SQLITE_OK;
}
static int databaseSectorSize(sqlite3_file *base) { return REAL(base)->pMethods->xSectorSize(REAL(base)); }
static int databaseDeviceCharacteristics(sqlite3_file *base) {
    return REAL(base)->pMethods->xDeviceCharacteristics(REAL(base));
}
static int databaseShmMap(sqlite3_file *base, int region, int size, int extend, void volatile **memory) {
    return REAL(base)->pMethods->xShmMap(REAL(base), region, size, extend, memory);
}
static void databaseShmBarrier(sqlite3_file *base) { REAL(base)->pMethods->xShmBarrier(REAL(base)); }
static int databaseShmUnmap(sqlite3_file *base, int deleteFlag) {
    return REAL(base)->pMethods->xShmUnmap(REAL(base), deleteFlag);
}
static int databaseFetch(sqlite3_file *base, sqlite3_int64 offset, int amount, void **pointer) {
    return REAL(base)->pMethods->xFetch(REAL(base), offset, amount, pointer);
}
static int databaseUnfetch(sqlite3_file *base, sqlite3_int64 offset, void *pointer) {
    // A checkpoint calls this right after reading a log header that changed, before it looks at how
    // much of the log is copied: the race's window, where a test restarts the log.
    if (((DatabaseFile *)base)->checkpointing && offset == 0 && !pointer) {
        pthread_mutex_lock(&window.mutex);
        void (*hook)(void *, void *) = window.hook;
        void *context = window.context;
        pthread_mutex_unlock(&window.mutex);
        if (hook) hook(context, base);
    }
    return REAL(base)->pMethods->xUnfetch(REAL(base), offset, pointer);
}

/// Takes or gives up the checkpoint lock in turn with the log's restarts: every checkpoint, the store's
/// and SQLite's own (a connection's last, as it closes), waits for a restart under way (CheckpointTurns.c).
static int checkpointLock(DatabaseFile *database, int offset, int count, int flags) {
    if (flags & SQLITE_SHM_UNLOCK) {
        int rc = database->real->pMethods->xShmLock(database->real, offset, count, flags);
        if (database->checkpointing) turnsEndCheckpoint(database->turns);
        database->checkpointing = 0;
        return rc;
    }
    // Busy, as when another connection checkpoints: the checkpoint copies nothing.
    if (!turnsBeginCheckpoint(database->turns)) return SQLITE_BUSY;
    int rc = database->real->pMethods->xShmLock(database->real, offset, count, flags);
    if (rc == SQLITE_OK) {
        database->checkpointing = 1;
    } else {
        turnsEndCheckpoint(database->turns);
    }
    return rc;
}

/// Takes or gives up the read marks' locks of a restart in turn with checkpoints: refused while another
/// connection checkpoints (CheckpointTurns.c).
static int restartLock(DatabaseFile *database, int offset, int count, int flags) {
    if (flags & SQLITE_SHM_UNLOCK) {
        int rc = database->real->pMethods->xShmLock(database->real, offset, count, flags);
        if (database->holdsRestartLocks) turnsEndRestart(database->turns);
        database->holdsRestartLocks = 0;
        return rc;
    }
    // Busy, as when a reader holds one of the marks: SQLite appends to the log instead.
    if (!turnsBeginRestart(database->turns, database->checkpointing)) return SQLITE_BUSY;
    int rc = database->real->pMethods->xShmLock(database->real, offset, count, flags);
    if (rc == SQLITE_OK) {
        database->holdsRestartLocks = 1;
    } else {
        turnsEndRestart(database->turns);
    }
    return rc;
}

static int databaseShmLock(sqlite3_file *base, int offset, int count, int flags) {
    DatabaseFile *database = (DatabaseFile *)base;
    int releasesWriteLock = (flags & SQLITE_SHM_UNLOCK) && offset <= LOG_WRITE_LOCK && offset + count > LOG_WRITE_LOCK;
    // Bytes still gathered here belong to a transaction that did not commit, and lie past the log's
    // last commit: written while the lock is held, they are what SQLite wrote, and nothing reads them.
    if (releasesWriteLock && database->log) (void)writeGathered(database->log);
    if (database->turns && (flags & SQLITE_SHM_EXCLUSIVE)) {
        if (offset == CHECKPOINT_LOCK && count == 1) return checkpointLock(database, offset, count, flags);
        if (isRestartLock(offset, count)) return restartLock(database, offset, count, flags);
    }
    return database->real->pMethods->xShmLock(database->real, offset, count, flags);
}

static const sqlite3_io_methods databaseMethods = {
    .iVersion = 3,
    .xClose = databaseClose,
    .xRead = databaseRead,
    .xWrite = databaseWrite,
    .xTruncate = databaseTruncate,
    .xSync = databaseSync,
    .xFileSize = databaseFileSize,
    .xLock = databaseLock,
    .xUnlock = databaseUnlock,
    .xCheckReservedLock = databaseCheckReservedLock,
    .xFileControl = databaseFileControl,
    .xSectorSize = databaseSectorSize,
    .xDeviceCharacteristics = databaseDeviceCharacteristics,
    .xShmMap = databaseShmMap,
    .xShmLock = databaseShmLock,
    .xShmBarrier = databaseShmBarrier,
    .xShmUnmap = databaseShmUnmap,
    .xFetch = databaseFetch,
    .xUnfetch = databaseUnfetch,
};

// MARK: - The VFS

/// Opens SQLite's own file after `wrapper`, giving `wrapper` `methods` when that is opened (SQLite
/// closes only a file whose methods are set).
static int openWrapped(sqlite3_file *wrapper, sqlite3_file **real, size_t size, const sqlite3_io_methods *methods,
                       const char *name, int flags, int *outFlags) {
    memset(wrapper, 0, size);
    *real = (sqlite3_file *)((char *)wrapper + size);
    int rc = realVFS->xOpen(realVFS, name, *real, flags, outFlags);
    if (rc != SQLITE_OK) return rc;
    if (!(*real)->pMethods || (*real)->pMethods->iVersion < 3) {
        if ((*real)->pMethods) (*real)->pMethods->xClose(*real);
        return SQLITE_CANTOPEN;
    }
    wrapper->pMethods = methods;
    return SQLITE_OK;
}

static int combiningOpen(sqlite3_vfs *vfs, const char *name, sqlite3_file *base, int flags, int *outFlags) {
    (void)vfs;
    if (flags & SQLITE_OPEN_MAIN_DB) {
        DatabaseFile *database = (DatabaseFile *)base;
        int rc = openWrapped(base, &database->real, sizeof *database, &databaseMethods, name, flags, outFlags);
        if (rc == SQLITE_OK && name) database->turns = turnsTake(name);
        return rc;
    }
    if (flags & SQLITE_OPEN_WAL) {
        LogFile *log = (LogFile *)base;
        int rc = openWrapped(base, &log->real, sizeof *log, &logMethods, name, flags, outFlags);
        sqlite3_file *owner = rc == SQLITE_OK ? sqlite3_database_file_object(name) : NULL;
        if (owner && owner->pMethods == &databaseMethods) {
            log->database = (DatabaseFile *)owner;
            log->database->log = log;
        }
        return rc;
    }
    return realVFS->xOpen(realVFS, name, base, flags, outFlags);
}

// The rest is the real VFS's, called with its own pointer.
static int combiningDelete(sqlite3_vfs *vfs, const char *name, int syncDir) {
    (void)vfs;
    return realVFS->xDelete(realVFS, name, syncDir);
}
static int combiningAccess(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    return realVFS->xAccess(realVFS, name, flags, result);
}
static int combiningFullPathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return realVFS->xFullPathname(realVFS, name, size, out);
}
static void *combiningDlOpen(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    return realVFS->xDlOpen(realVFS, name);
}
static void combiningDlError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    realVFS->xDlError(realVFS, size, message);
}
static void (*combiningDlSym(sqlite3_vfs *vfs, void *library, const char *symbol))(void) {
    (void)vfs;
    return realVFS->xDlSym(realVFS, library, symbol);
}
static void combiningDlClose(sqlite3_vfs *vfs, void *library) {
    (void)vfs;
    realVFS->xDlClose(realVFS, library);
}
static int combiningRandomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    return realVFS->xRandomness(realVFS, size, out);
}
static int combiningSleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    return realVFS->xSleep(realVFS, microseconds);
}
static int combiningCurrentTime(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    return realVFS->xCurrentTime(realVFS, now);
}
static int combiningGetLastError(sqlite3_vfs *vfs, int size, char *message) {
    (void)vfs;
    return realVFS->xGetLastError(realVFS, size, message);
}
static int combiningCurrentTimeInt64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    return realVFS->xCurrentTimeInt64(realVFS, now);
}

static sqlite3_vfs combiningVFS;

int cloudnotes_combine_log_writes(void) {
    if (sqlite3_vfs_find("cloudnotes") == &combiningVFS) return SQLITE_OK;
    int rc = sqlite3_initialize();
    if (rc != SQLITE_OK) return rc;
    realVFS = sqlite3_vfs_find(NULL);
    if (!realVFS || realVFS->iVersion < 2) return SQLITE_ERROR;
    int wrapper = (int)(sizeof(LogFile) > sizeof(DatabaseFile) ? sizeof(LogFile) : sizeof(DatabaseFile));
    combiningVFS = (sqlite3_vfs){
        .iVersion = 2,
        .szOsFile = wrapper + realVFS->szOsFile,
        .mxPathname = realVFS->mxPathname,
        .zName = "cloudnotes",
        .xOpen = combiningOpen,
        .xDelete = combiningDelete,
        .xAccess = combiningAccess,
        .xFullPathname = combiningFullPathname,
        .xDlOpen = combiningDlOpen,
        .xDlError = combiningDlError,
        .xDlSym = combiningDlSym,
        .xDlClose = combiningDlClose,
        .xRandomness = combiningRandomness,
        .xSleep = combiningSleep,
        .xCurrentTime = combiningCurrentTime,
        .xGetLastError = combiningGetLastError,
        .xCurrentTimeInt64 = combiningCurrentTimeInt64,
    };
    return sqlite3_vfs_register(&combiningVFS, 1);
}

// MARK: - Tests

void cloudnotes_set_checkpoint_window_hook(void (*hook)(void *context, void *file), void *context) {
    pthread_mutex_lock(&window.mutex);
    window.hook = hook;
    window.context = context;
    pthread_mutex_unlock(&window.mutex);
}

int cloudnotes_log_write_counts_of(void *connection, cloudnotes_log_write_counts *counts) {
    return sqlite3_file_control(connection, "main", COUNTS_FILE_CONTROL, counts);
}
