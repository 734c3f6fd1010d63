// Keeps a database file's write-ahead log from starting again while a checkpoint of it is under way,
// against SQLite's "WAL-reset bug" (https://sqlite.org/wal.html#walresetbug, test/walrestart.test),
// which every SQLite before 3.51.3 has (this machine's is 3.40.1): a checkpoint that reads the header
// of a log copied whole, and then sees another connection start the log again before it reads how
// much is copied, leaves a wrong mark behind, and a later checkpoint skips pages of a transaction;
// committed changes are lost and indexes miss rows. The store checkpoints on a connection of its own
// while the writer commits (`LogCheckpointer`), the race's very setting, and other processes (a second
// editor, the shell) write and checkpoint the same file.
//
// The VFS (LogWrites.c) sees both through SQLite's shared-memory locks. A restart asks for its turn when
// SQLite locks read marks 1-4 together, exclusively; refused, SQLite appends to the log instead, as it
// does whenever a reader holds one of those marks, and starts it again at a later commit. A checkpoint,
// any of them (the store's, GRDB's, SQLite's own as a connection closes), asks when it takes the
// checkpoint lock, before it reads the log's header, and waits for a restart under way. The two exclude
// each other:
// - within this process, by counts under one mutex;
// - between processes, by two bytes of the log's shared-memory file that SQLite never locks (it locks
//   bytes 120-128), locked through an open file description of this process's own (`F_OFD_SETLK`),
//   so that the locks are not the process's POSIX locks, which SQLite's own are: a checkpoint holds
//   a shared lock on one byte and then looks for a lock on the other, a restart takes the other and
//   then looks for a lock on the first, so at least one of them sees the other, and steps back.
//   That description is closed only after the last connection of this process to the file: closing
//   any descriptor of a file drops the process's POSIX locks on it, SQLite's included.

#define _GNU_SOURCE

#include "CheckpointTurns.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum {
    // In the shared-memory file, past SQLite's lock bytes (120-127, and 128 for its dead-man switch).
    CHECKPOINT_BYTE = 136,
    RESTART_BYTE = 137,
    // How a checkpoint waits for a restart: 5 s at most, in steps of 100 µs.
    CHECKPOINT_WAIT_NANOSECONDS = 100 * 1000,
    CHECKPOINT_WAIT_TRIES = 50 * 1000,
};

struct FileTurns {
    struct FileTurns *next;
    char *name;
    int users;
    /// This process's checkpoints under way, and restarts holding their locks.
    int checkpoints;
    int restarts;
    /// The shared-memory file, opened for the byte locks at the first turn that needs them; -1 before,
    /// or when it cannot be opened (a read-only folder): other processes are then not seen.
    int sharedMemory;
};

/// Every file's turns, changed under one mutex.
static struct {
    pthread_mutex_t mutex;
    FileTurns *files;
} all = {.mutex = PTHREAD_MUTEX_INITIALIZER};

// MARK: - Files

FileTurns *turnsTake(const char *name) {
    pthread_mutex_lock(&all.mutex);
    FileTurns *found = all.files;
    while (found && strcmp(found->name, name) != 0) found = found->next;
    if (!found && (found = calloc(1, sizeof *found))) {
        found->sharedMemory = -1;
        if (!(found->name = strdup(name))) {
            free(found);
            found = NULL;
        }
    }
    if (found && found->users++ == 0) {
        found->next = all.files;
        all.files = found;
    }
    pthread_mutex_unlock(&all.mutex);
    return found;
}

void turnsLeave(FileTurns *file) {
    if (!file) return;
    pthread_mutex_lock(&all.mutex);
    if (--file->users == 0) {
        FileTurns **link = &all.files;
        while (*link != file) link = &(*link)->next;
        *link = file->next;
        // The last connection has closed its log, and SQLite its shared memory with it.
        if (file->sharedMemory >= 0) close(file->sharedMemory);
        free(file->name);
        free(file);
    }
    pthread_mutex_unlock(&all.mutex);
}

// MARK: - Other processes

/// The descriptor of the file's shared memory, opened if need be; -1 when it cannot be. Under the mutex.
static int sharedMemory(FileTurns *file) {
    if (file->sharedMemory >= 0) return file->sharedMemory;
    size_t length = strlen(file->name);
    char *path = malloc(length + sizeof "-shm");
    if (!path) return -1;
    memcpy(path, file->name, length);
    memcpy(path + length, "-shm", sizeof "-shm");
    // Never created here: SQLite has made it by the time a log restarts or is checkpointed.
    file->sharedMemory = open(path, O_RDWR | O_CLOEXEC);
    free(path);
    return file->sharedMemory;
}

/// Sets (`F_RDLCK`, `F_WRLCK`) or clears (`F_UNLCK`) this process's lock on `byte`, without waiting.
static int lockByte(int descriptor, int byte, short type) {
    struct flock lock = {.l_type = type, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1};
    return fcntl(descriptor, F_OFD_SETLK, &lock);
}

/// Whether another process holds a lock on `byte`.
static int isLockedElsewhere(int descriptor, int byte) {
    struct flock lock = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1};
    return fcntl(descriptor, F_OFD_GETLK, &lock) == 0 && lock.l_type != F_UNLCK;
}

// MARK: - Turns

int turnsBeginRestart(FileTurns *file, int isCheckpointing) {
    pthread_mutex_lock(&all.mutex);
    int allowed = file->checkpoints <= isCheckpointing;
    if (allowed && file->restarts == 0) {
        int descriptor = sharedMemory(file);
        if (descriptor >= 0 && lockByte(descriptor, RESTART_BYTE, F_WRLCK) == 0
            && isLockedElsewhere(descriptor, CHECKPOINT_BYTE) && !isCheckpointing) {
            lockByte(descriptor, RESTART_BYTE, F_UNLCK);
            allowed = 0;
        }
    }
    if (allowed) file->restarts += 1;
    pthread_mutex_unlock(&all.mutex);
    return allowed;
}

void turnsEndRestart(FileTurns *file) {
    pthread_mutex_lock(&all.mutex);
    if (--file->restarts == 0 && file->sharedMemory >= 0) lockByte(file->sharedMemory, RESTART_BYTE, F_UNLCK);
    pthread_mutex_unlock(&all.mutex);
}

int turnsBeginCheckpoint(FileTurns *file) {
    // A restart holds its locks for a few stores into shared memory; a process stopped in one (a
    // debugger) would hold them for good, and the checkpoint then gives up rather than wait forever.
    for (int tries = 0; tries < CHECKPOINT_WAIT_TRIES; tries++) {
        pthread_mutex_lock(&all.mutex);
        int clear = file->restarts == 0;
        if (clear && file->checkpoints == 0) {
            int descriptor = sharedMemory(file);
            if (descriptor >= 0 && lockByte(descriptor, CHECKPOINT_BYTE, F_RDLCK) == 0
                && isLockedElsewhere(descriptor, RESTART_BYTE)) {
                lockByte(descriptor, CHECKPOINT_BYTE, F_UNLCK);
                clear = 0;
            }
        }
        if (clear) file->checkpoints += 1;
        pthread_mutex_unlock(&all.mutex);
        if (clear) return 1;
        nanosleep(&(struct timespec){.tv_nsec = CHECKPOINT_WAIT_NANOSECONDS}, NULL);
    }
    return 0;
}

void turnsEndCheckpoint(FileTurns *file) {
    pthread_mutex_lock(&all.mutex);
    if (--file->checkpoints == 0 && file->sharedMemory >= 0) lockByte(file->sharedMemory, CHECKPOINT_BYTE, F_UNLCK);
    pthread_mutex_unlock(&all.mutex);
}
