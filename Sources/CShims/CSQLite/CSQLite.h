// Thin shim over SQLite 3.40 (Debian 12). SQLITE_TRANSIENT is a macro casting -1 to a
// function pointer, which Swift cannot import.
#ifndef CASTPREP_CSQLITE_H
#define CASTPREP_CSQLITE_H

#include <sqlite3.h>

static inline sqlite3_destructor_type castprep_SQLITE_TRANSIENT(void) { return SQLITE_TRANSIENT; }

#endif
