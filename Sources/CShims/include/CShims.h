// The libc and SQLite calls Swift cannot reach: declared in headers Swift's Glibc module is not built
// to read, or variadic. One fixed-argument function each.

#ifndef CSHIMS_H
#define CSHIMS_H

#if defined(__linux__)
/// Writes to disk everything written to the file system that holds the open file `descriptor`: files'
/// data and folders' entries (`syncfs(2)`, declared by glibc only under _GNU_SOURCE). Returns 0, or -1
/// with `errno` set.
int cshims_syncfs(int descriptor);

/// Sets one of glibc's malloc options (`mallopt(3)`, declared in <malloc.h>, which Swift's Glibc
/// module leaves out). Returns 1 on success, 0 on an error.
int cshims_mallopt(int option, int value);
#endif

/// Turns the triggers of `connection` (an `sqlite3 *`) on or off through `sqlite3_db_config`, which
/// is variadic. Returns whether they are on afterwards, or -1 on an error.
///
/// The setting applies to statements prepared while it holds: changing it makes SQLite prepare every
/// statement of the connection again at its next step.
int cshims_set_triggers_enabled(void *connection, int enabled);

#endif
