// Checkpoints and restarts of one database file's write-ahead log, one at a time (see CheckpointTurns.c).

#ifndef CLOUDNOTES_CHECKPOINT_TURNS_H
#define CLOUDNOTES_CHECKPOINT_TURNS_H

/// The turns of one database file, shared by this process's connections to it.
typedef struct FileTurns FileTurns;

/// The turns of the file `name` (SQLite's full path of it), one more user counted; NULL without memory.
FileTurns *turnsTake(const char *name);
/// One user fewer; the last one frees them.
void turnsLeave(FileTurns *file);

/// Asks for a restart's turn, for a connection that `isCheckpointing` or not (a RESTART or TRUNCATE
/// checkpoint restarts the log itself). 1 when it may take the read marks' locks: it then holds the
/// turn until `turnsEndRestart`. 0 while a checkpoint of another connection, or of another process,
/// is under way.
int turnsBeginRestart(FileTurns *file, int isCheckpointing);
void turnsEndRestart(FileTurns *file);

/// Waits until no restart holds the read marks' locks, here or in another process, and counts a
/// checkpoint under way until `turnsEndCheckpoint`: 1. Gives up after 5 s: 0, and nothing counted.
int turnsBeginCheckpoint(FileTurns *file);
void turnsEndCheckpoint(FileTurns *file);

#endif
