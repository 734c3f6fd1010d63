#ifndef CSQLITE_DB_CONFIG_H
#define CSQLITE_DB_CONFIG_H

/// Turns the triggers of `connection` (an `sqlite3 *`) on or off through `sqlite3_db_config`, which
/// Swift cannot call (it is variadic). Returns whether they are on afterwards, or -1 on an error.
///
/// The setting applies to statements prepared while it holds: changing it makes SQLite prepare every
/// statement of the connection again at its next step.
int cloudnotes_set_triggers_enabled(void *connection, int enabled);

#endif
