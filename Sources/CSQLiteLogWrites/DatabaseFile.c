// A database file: SQLite's own, with the log's write lock watched and checkpoints and restarts of
// the log given their turns (CheckpointTurns.c).

#include "LogFiles.h"

#include <pthread.h>

// MARK: - The race's window, for tests

static struct {
    pthread_mutex_t mutex;
    void (*hook)(void *, void *);
    void *context;
} window = {.mutex = PTHREAD_MUTEX_INITIALIZER};

static int isRestartLock(int offset, int count) {
    return offset == FIRST_RESTART_LOCK && count == RESTART_LOCK_COUNT;
}

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

const sqlite3_io_methods databaseMethods = {
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

// MARK: - Tests

void cloudnotes_set_checkpoint_window_hook(void (*hook)(void *context, void *file), void *context) {
    pthread_mutex_lock(&window.mutex);
    window.hook = hook;
    window.context = context;
    pthread_mutex_unlock(&window.mutex);
}
