// Thin shim over libplist 2.2 (Debian 12's libplist3): run-time loading of the few functions
// `castprep ios check` needs to read and write Info.plist files, XML and binary alike.
//
// Why at run time: only `castprep ios check --fix` (and `preflight --ios`) read property
// lists, so every other command start should not map the library; and a machine without it
// gets a finding naming the package instead of a loader error before main(). The functions
// are resolved with dlopen/dlsym on first use, as CCurl.h does for libcurl.
//
// Swift calls castprep_<name>() instead of <name>(); each table entry is declared with
// __typeof__ of the real declaration, so a wrong wrapper does not compile. Callers check
// castprep_plist_load_error() first; a wrapper reached without that check stops the process
// with the same message instead of calling through a null pointer.
#ifndef CASTPREP_CPLIST_H
#define CASTPREP_CPLIST_H

#if !__has_include(<plist/plist.h>)
#error "libplist development headers not found; install them: apt-get install libplist-dev"
#endif

#include "../LibraryLoading/castprep_library.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <plist/plist.h>

// libplist 2.x installs libplist-2.0.so.3 (the -dev package's libplist-2.0.so points at it).
#if defined(__APPLE__)
#define CASTPREP_PLIST_SONAME "libplist-2.0.3.dylib"
#else
#define CASTPREP_PLIST_SONAME "libplist-2.0.so.3"
#endif

/// The Debian package that installs CASTPREP_PLIST_SONAME, for fix hints.
#define CASTPREP_PLIST_PACKAGE "libplist3"

// Every libplist function CastPrep calls: return type, name, parameters, arguments.
// CASTPREP_PLIST_VOID lists the ones returning void.
#define CASTPREP_PLIST_FUNCTIONS(X)                                                                       \
    X(plist_t, plist_new_dict, (void), ())                                                                \
    X(plist_t, plist_new_array, (void), ())                                                               \
    X(plist_t, plist_new_string, (const char *val), (val))                                                \
    X(plist_t, plist_new_bool, (uint8_t val), (val))                                                      \
    X(plist_t, plist_new_uint, (uint64_t val), (val))                                                     \
    X(plist_t, plist_new_real, (double val), (val))                                                       \
    X(plist_t, plist_new_data, (const char *val, uint64_t length), (val, length))                         \
    X(plist_t, plist_new_date, (int32_t sec, int32_t usec), (sec, usec))                                  \
    X(plist_t, plist_new_uid, (uint64_t val), (val))                                                      \
    X(plist_type, plist_get_node_type, (plist_t node), (node))                                            \
    X(uint32_t, plist_array_get_size, (plist_t node), (node))                                             \
    X(plist_t, plist_array_get_item, (plist_t node, uint32_t n), (node, n))

#define CASTPREP_PLIST_VOID(X)                                                                            \
    X(plist_free, (plist_t plist), (plist))                                                               \
    X(plist_array_append_item, (plist_t node, plist_t item), (node, item))                                \
    X(plist_dict_new_iter, (plist_t node, plist_dict_iter *iter), (node, iter))                           \
    X(plist_dict_next_item, (plist_t node, plist_dict_iter iter, char **key, plist_t *val),               \
      (node, iter, key, val))                                                                             \
    X(plist_dict_set_item, (plist_t node, const char *key, plist_t item), (node, key, item))              \
    X(plist_get_string_val, (plist_t node, char **val), (node, val))                                      \
    X(plist_get_bool_val, (plist_t node, uint8_t *val), (node, val))                                      \
    X(plist_get_uint_val, (plist_t node, uint64_t *val), (node, val))                                     \
    X(plist_get_real_val, (plist_t node, double *val), (node, val))                                       \
    X(plist_get_data_val, (plist_t node, char **val, uint64_t *length), (node, val, length))              \
    X(plist_get_date_val, (plist_t node, int32_t *sec, int32_t *usec), (node, sec, usec))                 \
    X(plist_get_uid_val, (plist_t node, uint64_t *val), (node, val))                                      \
    X(plist_to_bin, (plist_t plist, char **bin, uint32_t *length), (plist, bin, length))                  \
    X(plist_to_bin_free, (char *bin), (bin))                                                              \
    X(plist_from_xml, (const char *xml, uint32_t length, plist_t *plist), (xml, length, plist))           \
    X(plist_from_bin, (const char *bin, uint32_t length, plist_t *plist), (bin, length, plist))

/// The resolved functions, or the reason they could not be resolved.
typedef struct castprep_plist_api {
    /// Whether loading worked, and if not why (see castprep_library.h).
    castprep_library_status status;
    CASTPREP_PLIST_FUNCTIONS(CASTPREP_LIBRARY_FIELD)
    CASTPREP_PLIST_VOID(CASTPREP_LIBRARY_VOID_FIELD)
} castprep_plist_api;

/// Opens the library and resolves every function of the table (see castprep_library.h).
static inline void castprep_plist_resolve(castprep_plist_api *api) {
    const char *library = CASTPREP_PLIST_SONAME;
    void *handle = castprep_library_open(&api->status, "libplist (" CASTPREP_PLIST_SONAME ")", library);
    if (handle == NULL) return;
    CASTPREP_PLIST_FUNCTIONS(CASTPREP_LIBRARY_RESOLVE_FUNCTION)
    CASTPREP_PLIST_VOID(CASTPREP_LIBRARY_RESOLVE_VOID)
}

CASTPREP_LIBRARY_ACCESSORS(plist, castprep_plist_api, castprep_plist_resolve, "install it: apt-get install " CASTPREP_PLIST_PACKAGE)

#define CASTPREP_LIBRARY_CHECKED castprep_plist_checked
CASTPREP_PLIST_FUNCTIONS(CASTPREP_LIBRARY_WRAPPER)
CASTPREP_PLIST_VOID(CASTPREP_LIBRARY_VOID_WRAPPER)
#undef CASTPREP_LIBRARY_CHECKED

#endif
