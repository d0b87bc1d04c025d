#ifndef KEYHAVEN_CSQLITE_FLOOR_H
#define KEYHAVEN_CSQLITE_FLOOR_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro that casts -1 to a function pointer, which Swift cannot import.
static inline sqlite3_destructor_type floor_transient(void) { return SQLITE_TRANSIENT; }
#endif
