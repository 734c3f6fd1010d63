// Syncing a whole file system to disk, which Swift cannot call on Linux: glibc declares `syncfs(2)`
// only under _GNU_SOURCE, which Swift's Glibc module is not built with.

#ifndef CFILESYNC_H
#define CFILESYNC_H

#if defined(__linux__)
/// Writes to disk everything written to the file system that holds the open file `descriptor`: files'
/// data and folders' entries (`syncfs(2)`). Returns 0, or -1 with `errno` set.
int cfilesync_syncfs(int descriptor);
#endif

#endif
