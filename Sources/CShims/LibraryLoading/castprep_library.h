// Loading a C library at run time, written once for every shim that does it (CFFmpeg.h,
// CCurl.h, CMicroHTTPD.h, CPlist.h, CSDBus.h, COpenSSL.h, CLibXML2.h, CSQLite.h).
//
// Each shim lists the functions CastPrep calls in an X-macro table whose entries are declared
// with __typeof__ of the real declaration (a wrong wrapper does not compile), puts a
// castprep_library_status first in that table, resolves it with castprep_library_open and
// castprep_library_symbol, and gets its accessors from CASTPREP_LIBRARY_ACCESSORS: the table,
// loaded once on first use (thread-safe); the load error for callers that report it as a
// finding; and the table for the wrappers, which stops the process with the error and an
// install hint rather than call through a null pointer when a caller skipped the check.
//
// The table and its status are static, so there is one per object file that calls the
// wrappers; each resolves once, and dlopen of a library already loaded only counts a
// reference, so the copies cost microseconds and always agree.
#ifndef CASTPREP_LIBRARY_H
#define CASTPREP_LIBRARY_H

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/// Where loading a library stands.
typedef struct castprep_library_status {
    /// Null once every function resolved; otherwise what went wrong (points into `message`).
    const char *error;
    char message[768];
} castprep_library_status;

/// Opens `soname`; NULL, with the status's error saying "`what` could not be loaded (reason)",
/// when it cannot be loaded. `what` names the library and its file, e.g. "libcurl
/// (libcurl.so.4)".
static inline void *castprep_library_open(castprep_library_status *status, const char *what, const char *soname) {
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(status->message, sizeof status->message, "%s could not be loaded (%s)", what,
                 reason ? reason : "not found");
        status->error = status->message;
    }
    return handle;
}

/// The address of `name` in `handle` (or a library it depends on); NULL, with the status's
/// error saying "`library` has no function `name`", when the library is older than the headers.
static inline void *castprep_library_symbol(castprep_library_status *status, void *handle, const char *library,
                                            const char *name) {
    void *address = dlsym(handle, name);
    if (address == NULL) {
        snprintf(status->message, sizeof status->message,
                 "%s has no function %s (it is older than the headers CastPrep was built with)", library, name);
        status->error = status->message;
    }
    return address;
}

/// Resolves `name` into the table `api` (a pointer with a `status` member) from `handle`, or
/// returns from the enclosing resolve function.
#define CASTPREP_LIBRARY_RESOLVE(api, handle, library, name)                                                       \
    api->name = (__typeof__(name) *)castprep_library_symbol(&api->status, handle, library, #name);               \
    if (api->name == NULL) return;

/// The accessors of a table of type `type` (whose first member is `castprep_library_status
/// status`), resolved by `resolve(type *)`, which leaves `status.error` set on failure:
/// castprep_<prefix>() loads it once, castprep_<prefix>_load_error() is null when it is
/// complete, castprep_<prefix>_checked() stops with the error and `hint` when it is not.
#define CASTPREP_LIBRARY_ACCESSORS(prefix, type, resolve, hint)                                                    \
    static inline type *castprep_##prefix##_storage(void) {                                                      \
        static type api;                                                                                         \
        return &api;                                                                                             \
    }                                                                                                            \
    static inline void castprep_##prefix##_resolve_once(void) { resolve(castprep_##prefix##_storage()); }        \
    static inline const type *castprep_##prefix(void) {                                                          \
        static pthread_once_t once = PTHREAD_ONCE_INIT;                                                          \
        pthread_once(&once, castprep_##prefix##_resolve_once);                                                   \
        return castprep_##prefix##_storage();                                                                    \
    }                                                                                                            \
    static inline const char *castprep_##prefix##_load_error(void) { return castprep_##prefix()->status.error; } \
    static inline const type *castprep_##prefix##_checked(void) {                                                \
        const type *api = castprep_##prefix();                                                                   \
        if (api->status.error != NULL) {                                                                         \
            fprintf(stderr, "castprep: %s; %s\n", api->status.error, hint);                                     \
            abort();                                                                                             \
        }                                                                                                        \
        return api;                                                                                              \
    }


// The entries of a shim's X-macro tables, passed as their X, for the three shapes a table can
// have: FUNCTIONS entries (result, name, parameters, arguments), VOID entries (name,
// parameters, arguments) and VARIADIC entries (name; variadic functions get typed wrappers
// written by hand). A shim's table type lists its fields with the *_FIELD entries:
//
//     typedef struct castprep_curl_api {
//         castprep_library_status status;
//         CASTPREP_CURL_FUNCTIONS(CASTPREP_LIBRARY_FIELD)
//     } castprep_curl_api;
//
// its resolve function, which has `api`, `handle` and `library` (the file name, for messages)
// in scope, resolves them with the RESOLVE_* entries; and its wrappers (castprep_<name>()) come
// from the *_WRAPPER entries, with CASTPREP_LIBRARY_CHECKED defined around them as the name of
// the shim's castprep_<prefix>_checked.
#define CASTPREP_LIBRARY_FIELD(result, name, parameters, arguments) __typeof__(name) *name;
#define CASTPREP_LIBRARY_VOID_FIELD(name, parameters, arguments) __typeof__(name) *name;
#define CASTPREP_LIBRARY_VARIADIC_FIELD(name) __typeof__(name) *name;
#define CASTPREP_LIBRARY_RESOLVE_FUNCTION(result, name, parameters, arguments)                                     \
    CASTPREP_LIBRARY_RESOLVE(api, handle, library, name)
#define CASTPREP_LIBRARY_RESOLVE_VOID(name, parameters, arguments) CASTPREP_LIBRARY_RESOLVE(api, handle, library, name)
#define CASTPREP_LIBRARY_RESOLVE_VARIADIC(name) CASTPREP_LIBRARY_RESOLVE(api, handle, library, name)
#define CASTPREP_LIBRARY_WRAPPER(result, name, parameters, arguments)                                              \
    static inline result castprep_##name parameters { return (CASTPREP_LIBRARY_CHECKED()->name) arguments; }
#define CASTPREP_LIBRARY_VOID_WRAPPER(name, parameters, arguments)                                                 \
    static inline void castprep_##name parameters { (CASTPREP_LIBRARY_CHECKED()->name) arguments; }

#endif
