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

#include "LogFiles.h"

#include <string.h>

static sqlite3_vfs *realVFS;

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

int cloudnotes_log_write_counts_of(void *connection, cloudnotes_log_write_counts *counts) {
    return sqlite3_file_control(connection, "main", COUNTS_FILE_CONTROL, counts);
}
