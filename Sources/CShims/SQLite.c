// `sqlite3_db_config` takes its arguments after `...`, which Swift cannot pass.

#include "CShims.h"

#include <sqlite3.h>

int cshims_set_triggers_enabled(void *connection, int enabled) {
    int now = -1;
    if (sqlite3_db_config((sqlite3 *)connection, SQLITE_DBCONFIG_ENABLE_TRIGGER, enabled ? 1 : 0, &now) != SQLITE_OK) {
        return -1;
    }
    return now;
}
