// Syncing a whole file system to disk, which Swift cannot call on Linux: glibc declares `syncfs(2)`
// only under _GNU_SOURCE, which Swift's Glibc module is not built with.

#ifndef CFILESYNC_H
#define CFILESYNC_H

/// On Linux, writes to disk everything written to the file system that holds the open file
/// `descriptor`, files' data and folders' entries (`syncfs(2)`). Elsewhere it syncs `descriptor` alone
/// (`fsync(2)`): for a folder, its entries, not its files' data. Returns 0, or -1 with `errno` set.
int cfilesync_file_system(int descriptor);

#endif
