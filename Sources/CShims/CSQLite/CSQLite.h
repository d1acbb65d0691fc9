// Thin shim over SQLite 3.40 (Debian 12): run-time loading, and SQLITE_TRANSIENT (a macro
// casting -1 to a function pointer, which Swift cannot import).
//
// Why at run time: only preflight's result cache uses SQLite, and binding the library when
// castprep starts cost every other command (load, validate, captions, --version) about half a
// millisecond. The functions are resolved with dlopen/dlsym on first use, as CCurl.h does for
// libcurl: Swift calls castprep_<name>() instead of <name>(), each table entry is declared
// with __typeof__ of the real declaration (a wrong wrapper does not compile), callers check
// castprep_sqlite_load_error() first, and a wrapper reached without that check stops the
// process with the same message instead of calling through a null pointer.
#ifndef CASTPREP_CSQLITE_H
#define CASTPREP_CSQLITE_H

#if !__has_include(<sqlite3.h>)
#error "SQLite development headers not found; install them: apt-get install libsqlite3-dev"
#endif

#include "../LibraryLoading/castprep_library.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sqlite3.h>

// The soname has been libsqlite3.so.0 for all of SQLite 3.
#if defined(__APPLE__)
#define CASTPREP_SQLITE_SONAME "libsqlite3.0.dylib"
#else
#define CASTPREP_SQLITE_SONAME "libsqlite3.so.0"
#endif

/// The Debian package that installs CASTPREP_SQLITE_SONAME, for fix hints.
#define CASTPREP_SQLITE_PACKAGE "libsqlite3-0"

// Every SQLite function CastPrep calls: return type, name, parameters, arguments.
#define CASTPREP_SQLITE_FUNCTIONS(X)                                                                               \
    X(int, sqlite3_libversion_number, (void), ())                                                                  \
    X(int, sqlite3_threadsafe, (void), ())                                                                         \
    X(int, sqlite3_open_v2, (const char *filename, sqlite3 **db, int flags, const char *vfs),                      \
      (filename, db, flags, vfs))                                                                                  \
    X(int, sqlite3_close, (sqlite3 *db), (db))                                                                     \
    X(const char *, sqlite3_errmsg, (sqlite3 *db), (db))                                                           \
    X(int, sqlite3_busy_timeout, (sqlite3 *db, int milliseconds), (db, milliseconds))                              \
    X(int, sqlite3_exec,                                                                                           \
      (sqlite3 *db, const char *sql, int (*callback)(void *, int, char **, char **), void *argument,              \
       char **error),                                                                                              \
      (db, sql, callback, argument, error))                                                                        \
    X(int, sqlite3_prepare_v2,                                                                                     \
      (sqlite3 *db, const char *sql, int bytes, sqlite3_stmt **statement, const char **tail),                      \
      (db, sql, bytes, statement, tail))                                                                           \
    X(int, sqlite3_step, (sqlite3_stmt *statement), (statement))                                                   \
    X(int, sqlite3_reset, (sqlite3_stmt *statement), (statement))                                                  \
    X(int, sqlite3_clear_bindings, (sqlite3_stmt *statement), (statement))                                         \
    X(int, sqlite3_finalize, (sqlite3_stmt *statement), (statement))                                               \
    X(int, sqlite3_bind_text,                                                                                      \
      (sqlite3_stmt *statement, int index, const char *text, int bytes, void (*destructor)(void *)),              \
      (statement, index, text, bytes, destructor))                                                                 \
    X(int, sqlite3_bind_blob,                                                                                      \
      (sqlite3_stmt *statement, int index, const void *bytes, int count, void (*destructor)(void *)),             \
      (statement, index, bytes, count, destructor))                                                                \
    X(int, sqlite3_bind_zeroblob, (sqlite3_stmt *statement, int index, int count), (statement, index, count))      \
    X(int, sqlite3_bind_int64, (sqlite3_stmt *statement, int index, sqlite3_int64 value), (statement, index, value)) \
    X(int, sqlite3_bind_double, (sqlite3_stmt *statement, int index, double value), (statement, index, value))     \
    X(int, sqlite3_column_bytes, (sqlite3_stmt *statement, int column), (statement, column))                       \
    X(const unsigned char *, sqlite3_column_text, (sqlite3_stmt *statement, int column), (statement, column))      \
    X(const void *, sqlite3_column_blob, (sqlite3_stmt *statement, int column), (statement, column))               \
    X(sqlite3_int64, sqlite3_column_int64, (sqlite3_stmt *statement, int column), (statement, column))             \
    X(int, sqlite3_column_int, (sqlite3_stmt *statement, int column), (statement, column))

/// The resolved functions, or the reason they could not be resolved.
typedef struct castprep_sqlite_api {
    /// Whether loading worked, and if not why (see castprep_library.h).
    castprep_library_status status;
    CASTPREP_SQLITE_FUNCTIONS(CASTPREP_LIBRARY_FIELD)
} castprep_sqlite_api;

/// Opens the library and resolves every function of the table (see castprep_library.h).
static inline void castprep_sqlite_resolve(castprep_sqlite_api *api) {
    const char *library = CASTPREP_SQLITE_SONAME;
    void *handle = castprep_library_open(&api->status, "SQLite (" CASTPREP_SQLITE_SONAME ")", library);
    if (handle == NULL) return;
    CASTPREP_SQLITE_FUNCTIONS(CASTPREP_LIBRARY_RESOLVE_FUNCTION)
}

CASTPREP_LIBRARY_ACCESSORS(sqlite, castprep_sqlite_api, castprep_sqlite_resolve, "install it: apt-get install " CASTPREP_SQLITE_PACKAGE)

#define CASTPREP_LIBRARY_CHECKED castprep_sqlite_checked
CASTPREP_SQLITE_FUNCTIONS(CASTPREP_LIBRARY_WRAPPER)
#undef CASTPREP_LIBRARY_CHECKED

static inline sqlite3_destructor_type castprep_SQLITE_TRANSIENT(void) { return SQLITE_TRANSIENT; }

#endif
