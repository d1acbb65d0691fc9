// Thin shim over libcurl 7.88 (Debian 12): typed wrappers for the variadic calls, which Swift
// cannot make, and run-time loading.
//
// Why libcurl is loaded at run time: linking it made every castprep start load about 30 more
// shared libraries (GnuTLS, Kerberos, LDAP, RTMP, SSH, nghttp2, IDN, PSL, Brotli...), which
// Debian binds immediately: most of the start-up cost of the commands that never send a
// request (captions convert, validate, load, --version). Instead, the functions CastPrep calls
// are resolved with dlopen/dlsym the first time one is needed, as CFFmpeg.h does for FFmpeg.
//
// Swift calls castprep_<name>() instead of <name>(); each wrapper forwards to the resolved
// function, whose table entry is declared with __typeof__ of the real declaration, so a wrong
// wrapper does not compile. The typecheck-gcc.h macros of curl.h (curl_easy_setopt and
// friends) are bypassed by calling the table's pointers in parentheses. Callers check
// castprep_curl_load_error() first and turn a missing library into their own error; a wrapper
// reached without that check stops the process with the same message instead of calling
// through a null pointer.
#ifndef CASTPREP_CCURL_H
#define CASTPREP_CCURL_H

#if !__has_include(<curl/curl.h>)
#error "libcurl development headers not found; install them: apt-get install libcurl4-openssl-dev"
#endif

#include "../LibraryLoading/castprep_library.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <curl/curl.h>

// The soname has been libcurl.so.4 since curl 7.16 (2006); curl.h has no macro for it, and its
// version macros (7.x, 8.x) do not change it.
#if defined(__APPLE__)
#define CASTPREP_CURL_SONAME "libcurl.4.dylib"
#else
#define CASTPREP_CURL_SONAME "libcurl.so.4"
#endif

/// The Debian package that installs CASTPREP_CURL_SONAME, for fix hints.
#define CASTPREP_CURL_PACKAGE "libcurl4"

// Every libcurl function CastPrep calls with fixed arguments: return type, name, parameters,
// arguments. CASTPREP_CURL_VOID lists the ones returning void; CASTPREP_CURL_VARIADIC the ones
// the typed wrappers below call.
#define CASTPREP_CURL_FUNCTIONS(X)                                                                                \
    X(CURLcode, curl_global_init, (long flags), (flags))                                                          \
    X(CURL *, curl_easy_init, (void), ())                                                                         \
    X(const char *, curl_easy_strerror, (CURLcode code), (code))                                                  \
    X(CURLM *, curl_multi_init, (void), ())                                                                       \
    X(CURLMcode, curl_multi_add_handle, (CURLM *multi, CURL *easy), (multi, easy))                                \
    X(CURLMcode, curl_multi_remove_handle, (CURLM *multi, CURL *easy), (multi, easy))                             \
    X(CURLMcode, curl_multi_socket_action,                                                                        \
      (CURLM *multi, curl_socket_t socket, int events, int *running_handles),                                     \
      (multi, socket, events, running_handles))                                                                   \
    X(CURLMsg *, curl_multi_info_read, (CURLM *multi, int *msgs_in_queue), (multi, msgs_in_queue))               \
    X(CURLMcode, curl_multi_cleanup, (CURLM *multi), (multi))                                                     \
    X(struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *string), (list, string))

#define CASTPREP_CURL_VOID(X)                                                                                     \
    X(curl_easy_cleanup, (CURL *curl), (curl))                                                                    \
    X(curl_slist_free_all, (struct curl_slist *list), (list))

#define CASTPREP_CURL_VARIADIC(X)                                                                                 \
    X(curl_easy_setopt)                                                                                           \
    X(curl_easy_getinfo)                                                                                          \
    X(curl_multi_setopt)                                                                                          \
    X(curl_version_info)

/// The resolved functions, or the reason they could not be resolved.
typedef struct castprep_curl_api {
    /// Whether loading worked, and if not why (see castprep_library.h).
    castprep_library_status status;
    CASTPREP_CURL_FUNCTIONS(CASTPREP_LIBRARY_FIELD)
    CASTPREP_CURL_VOID(CASTPREP_LIBRARY_VOID_FIELD)
    CASTPREP_CURL_VARIADIC(CASTPREP_LIBRARY_VARIADIC_FIELD)
} castprep_curl_api;

/// Opens the library and resolves every function of the table (see castprep_library.h).
static inline void castprep_curl_resolve(castprep_curl_api *api) {
    const char *library = CASTPREP_CURL_SONAME;
    void *handle = castprep_library_open(&api->status, "libcurl (" CASTPREP_CURL_SONAME ")", library);
    if (handle == NULL) return;
    CASTPREP_CURL_FUNCTIONS(CASTPREP_LIBRARY_RESOLVE_FUNCTION)
    CASTPREP_CURL_VOID(CASTPREP_LIBRARY_RESOLVE_VOID)
    CASTPREP_CURL_VARIADIC(CASTPREP_LIBRARY_RESOLVE_VARIADIC)
}

CASTPREP_LIBRARY_ACCESSORS(curl, castprep_curl_api, castprep_curl_resolve, "install it: apt-get install " CASTPREP_CURL_PACKAGE)

#define CASTPREP_LIBRARY_CHECKED castprep_curl_checked
CASTPREP_CURL_FUNCTIONS(CASTPREP_LIBRARY_WRAPPER)
CASTPREP_CURL_VOID(CASTPREP_LIBRARY_VOID_WRAPPER)
#undef CASTPREP_LIBRARY_CHECKED

// curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt are variadic, which Swift cannot
// call, so each argument type CastPrep passes gets a typed wrapper.

static inline CURLcode castprep_curl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return (castprep_curl_checked()->curl_easy_setopt)(handle, option, value);
}
static inline CURLcode castprep_curl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return (castprep_curl_checked()->curl_easy_setopt)(handle, option, value);
}
static inline CURLcode castprep_curl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return (castprep_curl_checked()->curl_easy_setopt)(handle, option, value);
}
static inline CURLcode castprep_curl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return (castprep_curl_checked()->curl_easy_setopt)(handle, option, value);
}
typedef size_t (*castprep_curl_data_callback)(char *, size_t, size_t, void *);
static inline CURLcode castprep_curl_easy_setopt_data_callback(CURL *handle, CURLoption option,
                                                                castprep_curl_data_callback value) {
    return (castprep_curl_checked()->curl_easy_setopt)(handle, option, value);
}
static inline CURLcode castprep_curl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return (castprep_curl_checked()->curl_easy_getinfo)(handle, info, value);
}
static inline CURLcode castprep_curl_easy_getinfo_double(CURL *handle, CURLINFO info, double *value) {
    return (castprep_curl_checked()->curl_easy_getinfo)(handle, info, value);
}
static inline CURLcode castprep_curl_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return (castprep_curl_checked()->curl_easy_getinfo)(handle, info, value);
}
static inline CURLMcode castprep_curl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return (castprep_curl_checked()->curl_multi_setopt)(handle, option, value);
}

static inline CURLMcode castprep_curl_multi_setopt_pointer(CURLM *handle, CURLMoption option, void *value) {
    return (castprep_curl_checked()->curl_multi_setopt)(handle, option, value);
}

// The multi_socket API: libcurl tells the caller's event loop which sockets to watch
// (CURLMOPT_SOCKETFUNCTION) and when to call it back without socket activity
// (CURLMOPT_TIMERFUNCTION); the loop calls curl_multi_socket_action for either. The callback
// types are curl_socket_callback and curl_multi_timer_callback from curl/multi.h.
static inline CURLMcode castprep_curl_multi_setopt_socket_callback(CURLM *handle, curl_socket_callback value) {
    return (castprep_curl_checked()->curl_multi_setopt)(handle, CURLMOPT_SOCKETFUNCTION, value);
}
static inline CURLMcode castprep_curl_multi_setopt_timer_callback(CURLM *handle, curl_multi_timer_callback value) {
    return (castprep_curl_checked()->curl_multi_setopt)(handle, CURLMOPT_TIMERFUNCTION, value);
}

/// CURLVERSION_NOW is a macro naming the newest struct layout this header knows.
static inline curl_version_info_data *castprep_curl_version_info(void) {
    return (castprep_curl_checked()->curl_version_info)(CURLVERSION_NOW);
}

#endif
