// Thin shim over libmicrohttpd 0.9.75 (Debian 12). MHD_start_daemon is variadic, so the
// options CastPrep uses are passed through a fixed-argument wrapper.
#ifndef CASTPREP_CMICROHTTPD_H
#define CASTPREP_CMICROHTTPD_H

#include <stdarg.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Starts a daemon on `port` (0 = any) with a connection limit and idle timeout (seconds).
static inline struct MHD_Daemon *castprep_MHD_start_daemon(unsigned int flags, uint16_t port,
        MHD_AccessHandlerCallback handler, void *handler_context,
        unsigned int connection_limit, unsigned int timeout_seconds,
        const struct sockaddr *bind_address) {
    if (bind_address != NULL) {
        return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_context,
                                MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                                MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                                MHD_OPTION_SOCK_ADDR, bind_address,
                                MHD_OPTION_END);
    }
    return MHD_start_daemon(flags, port, NULL, NULL, handler, handler_context,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_END);
}

/// Starts a daemon on a listening socket the caller opened (so bind errors are the caller's to
/// report precisely), with the limits a media server needs: total and per-IP connections, an
/// idle timeout in seconds, per-connection memory (which also caps the request header size),
/// worker threads, and an unescape callback (MHD's default one decodes %00 into the path).
static inline struct MHD_Daemon *castprep_MHD_start_daemon_on_socket(unsigned int flags, int listen_fd,
        MHD_AccessHandlerCallback handler, void *handler_context,
        size_t (*unescape)(void *context, struct MHD_Connection *connection, char *text), void *unescape_context,
        unsigned int connection_limit, unsigned int per_ip_limit, unsigned int timeout_seconds,
        size_t memory_limit, unsigned int thread_pool_size) {
    return MHD_start_daemon(flags, 0, NULL, NULL, handler, handler_context,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket) listen_fd,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, unescape_context,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
                            MHD_OPTION_THREAD_POOL_SIZE, thread_pool_size,
                            MHD_OPTION_END);
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
    return MHD_create_response_from_callback(size, 4096, castprep_MHD_read_no_body, NULL, NULL);
}

/// The peer address of a connection (MHD_get_connection_info is variadic); NULL when unknown.
static inline const struct sockaddr *castprep_MHD_client_address(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return info != NULL ? info->client_addr : NULL;
}

/// How many connections the daemon holds open now (MHD_get_daemon_info is variadic).
static inline unsigned int castprep_MHD_current_connections(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info != NULL ? info->num_connections : 0;
}

#endif
