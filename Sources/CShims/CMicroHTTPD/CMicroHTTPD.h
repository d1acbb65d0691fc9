// Thin shim over libmicrohttpd 0.9.75 (Debian 12): fixed-argument wrappers for the variadic
// calls, which Swift cannot make, and run-time loading.
//
// Why libmicrohttpd is loaded at run time: linking it made every castprep start load GnuTLS
// and its dependencies, and run GnuTLS's library constructor (which initialises libtasn1:
// about a tenth of the start-up CPU time), also for the commands that never serve anything.
// Instead, the functions CastPrep calls are resolved with dlopen/dlsym the first time a server
// starts, as CFFmpeg.h does for FFmpeg.
//
// Swift calls castprep_<name>() instead of <name>(); each wrapper forwards to the resolved
// function, whose table entry is declared with __typeof__ of the real declaration, so a wrong
// wrapper does not compile. Callers check castprep_microhttpd_load_error() first and turn a
// missing library into their own error; a wrapper reached without that check stops the
// process with the same message instead of calling through a null pointer.
#ifndef CASTPREP_CMICROHTTPD_H
#define CASTPREP_CMICROHTTPD_H

#if !__has_include(<microhttpd.h>)
#error "libmicrohttpd development headers not found; install them: apt-get install libmicrohttpd-dev"
#endif

#include "../LibraryLoading/castprep_library.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

// microhttpd.h has no macro for the soname; libmicrohttpd.so.12 is the one of the 0.9.x
// releases (0.9.75 in Debian 12) whose ABI these calls are written for.
#if defined(__APPLE__)
#define CASTPREP_MICROHTTPD_SONAME "libmicrohttpd.12.dylib"
#else
#define CASTPREP_MICROHTTPD_SONAME "libmicrohttpd.so.12"
#endif

/// The Debian package that installs CASTPREP_MICROHTTPD_SONAME, for fix hints.
#define CASTPREP_MICROHTTPD_PACKAGE "libmicrohttpd12"

// Every libmicrohttpd function CastPrep calls with fixed arguments: return type, name,
// parameters, arguments. CASTPREP_MICROHTTPD_VOID lists the ones returning void;
// CASTPREP_MICROHTTPD_VARIADIC the ones the fixed-argument wrappers below call.
#define CASTPREP_MICROHTTPD_FUNCTIONS(X)                                                                          \
    X(const char *, MHD_get_version, (void), ())                                                                  \
    X(enum MHD_Result, MHD_queue_response,                                                                        \
      (struct MHD_Connection *connection, unsigned int status_code, struct MHD_Response *response),              \
      (connection, status_code, response))                                                                        \
    X(struct MHD_Response *, MHD_create_response_from_buffer,                                                     \
      (size_t size, void *buffer, enum MHD_ResponseMemoryMode mode), (size, buffer, mode))                        \
    X(struct MHD_Response *, MHD_create_response_from_fd_at_offset64, (uint64_t size, int fd, uint64_t offset),  \
      (size, fd, offset))                                                                                         \
    X(struct MHD_Response *, MHD_create_response_from_callback,                                                   \
      (uint64_t size, size_t block_size, MHD_ContentReaderCallback crc, void *crc_cls,                            \
       MHD_ContentReaderFreeCallback crfc),                                                                       \
      (size, block_size, crc, crc_cls, crfc))                                                                     \
    X(enum MHD_Result, MHD_add_response_header,                                                                   \
      (struct MHD_Response *response, const char *header, const char *content), (response, header, content))     \
    X(const char *, MHD_lookup_connection_value,                                                                  \
      (struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key), (connection, kind, key))

#define CASTPREP_MICROHTTPD_VOID(X)                                                                               \
    X(MHD_stop_daemon, (struct MHD_Daemon *daemon), (daemon))                                                     \
    X(MHD_destroy_response, (struct MHD_Response *response), (response))

#define CASTPREP_MICROHTTPD_VARIADIC(X)                                                                           \
    X(MHD_start_daemon)                                                                                           \
    X(MHD_get_connection_info)                                                                                    \
    X(MHD_get_daemon_info)                                                                                        \
    X(MHD_set_connection_option)

/// The resolved functions, or the reason they could not be resolved.
typedef struct castprep_microhttpd_api {
    /// Whether loading worked, and if not why (see castprep_library.h).
    castprep_library_status status;
    CASTPREP_MICROHTTPD_FUNCTIONS(CASTPREP_LIBRARY_FIELD)
    CASTPREP_MICROHTTPD_VOID(CASTPREP_LIBRARY_VOID_FIELD)
    CASTPREP_MICROHTTPD_VARIADIC(CASTPREP_LIBRARY_VARIADIC_FIELD)
} castprep_microhttpd_api;

/// Opens the library and resolves every function of the table (see castprep_library.h).
static inline void castprep_microhttpd_resolve(castprep_microhttpd_api *api) {
    const char *library = CASTPREP_MICROHTTPD_SONAME;
    void *handle = castprep_library_open(&api->status, "libmicrohttpd (" CASTPREP_MICROHTTPD_SONAME ")", library);
    if (handle == NULL) return;
    CASTPREP_MICROHTTPD_FUNCTIONS(CASTPREP_LIBRARY_RESOLVE_FUNCTION)
    CASTPREP_MICROHTTPD_VOID(CASTPREP_LIBRARY_RESOLVE_VOID)
    CASTPREP_MICROHTTPD_VARIADIC(CASTPREP_LIBRARY_RESOLVE_VARIADIC)
}

CASTPREP_LIBRARY_ACCESSORS(microhttpd, castprep_microhttpd_api, castprep_microhttpd_resolve, "install it: apt-get install " CASTPREP_MICROHTTPD_PACKAGE)

#define CASTPREP_LIBRARY_CHECKED castprep_microhttpd_checked
CASTPREP_MICROHTTPD_FUNCTIONS(CASTPREP_LIBRARY_WRAPPER)
CASTPREP_MICROHTTPD_VOID(CASTPREP_LIBRARY_VOID_WRAPPER)
#undef CASTPREP_LIBRARY_CHECKED

// MHD_start_daemon, MHD_get_connection_info, MHD_get_daemon_info and MHD_set_connection_option are variadic, which Swift
// cannot call, so the option lists CastPrep uses are passed through fixed-argument wrappers.

/// Starts a daemon on a listening socket the caller opened (so bind errors are the caller's to
/// report precisely), with the limits a media server needs: total and per-IP connections, an
/// idle timeout in seconds, per-connection memory (which also caps the request header size),
/// worker threads, an unescape callback (MHD's default one decodes %00 into the path), and a
/// callback told of each connection as it starts and ends.
static inline struct MHD_Daemon *castprep_MHD_start_daemon_on_socket(unsigned int flags, int listen_fd,
        MHD_AccessHandlerCallback handler, void *handler_context,
        size_t (*unescape)(void *context, struct MHD_Connection *connection, char *text), void *unescape_context,
        MHD_NotifyConnectionCallback notify, void *notify_context,
        unsigned int connection_limit, unsigned int per_ip_limit, unsigned int timeout_seconds,
        size_t memory_limit, unsigned int thread_pool_size) {
    return (castprep_microhttpd_checked()->MHD_start_daemon)(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket) listen_fd,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, unescape_context,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, notify_context,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_END);
}

/// Whether a connection notification tells of a new connection (the enum's constants do not
/// reach Swift by name).
static inline int castprep_MHD_is_connection_start(enum MHD_ConnectionNotificationCode code) {
    return code == MHD_CONNECTION_NOTIFY_STARTED;
}

/// Sets one connection's inactivity timeout in seconds (MHD_set_connection_option is variadic).
static inline void castprep_MHD_set_connection_timeout(struct MHD_Connection *connection, unsigned int seconds) {
    (void) (castprep_microhttpd_checked()->MHD_set_connection_option)(connection, MHD_CONNECTION_OPTION_TIMEOUT, seconds);
}

/// The body reader of a response that is never sent (HEAD): libmicrohttpd takes the
/// Content-Length from the response's size and, for HEAD, never reads; were it ever asked
/// for bytes, the error closes the connection. (MHD_CONTENT_READER_END_WITH_ERROR is a macro.)
static inline ssize_t castprep_MHD_read_no_body(void *context, uint64_t position, char *buffer, size_t capacity) {
    (void) context;
    (void) position;
    (void) buffer;
    (void) capacity;
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

/// A response announcing `size` body bytes without a file or buffer behind them, for HEAD.
static inline struct MHD_Response *castprep_MHD_create_response_without_body(uint64_t size) {
    return castprep_MHD_create_response_from_callback(size, 4096, castprep_MHD_read_no_body, NULL, NULL);
}

/// The peer address of a connection (MHD_get_connection_info is variadic); NULL when unknown.
static inline const struct sockaddr *castprep_MHD_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        (castprep_microhttpd_checked()->MHD_get_connection_info)(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info != NULL ? info->client_addr : NULL;
}

/// The socket of a connection (MHD_get_connection_info is variadic); -1 when unknown.
static inline int castprep_MHD_connection_socket(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        (castprep_microhttpd_checked()->MHD_get_connection_info)(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? (int) info->connect_fd : -1;
}

/// How many connections the daemon holds open now (MHD_get_daemon_info is variadic).
static inline unsigned int castprep_MHD_current_connections(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info =
        (castprep_microhttpd_checked()->MHD_get_daemon_info)(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info != NULL ? info->num_connections : 0;
}

#endif
