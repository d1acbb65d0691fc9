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

#endif
