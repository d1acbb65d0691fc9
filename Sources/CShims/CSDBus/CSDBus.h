// Thin shim over sd-bus (libsystemd0 252 in Debian 12): run-time loading of the D-Bus client
// calls `castprep nowplaying` needs to publish MPRIS players on the session bus.
//
// Why at run time: only `castprep nowplaying` talks to D-Bus, so every other command start
// does not map libsystemd, and a machine without it (a container, a non-systemd system) gets
// a coded error naming the package instead of a loader error before main(). As CPlist.h does:
// each table entry is declared with __typeof__ of the real declaration, so a wrong wrapper does
// not compile; callers check castprep_sdbus_load_error() first.
//
// Only non-variadic calls are wrapped (append_basic / open_container rather than the
// format-string sd_bus_message_append), since Swift cannot call C variadic functions.
#ifndef CASTPREP_CSDBUS_H
#define CASTPREP_CSDBUS_H

#if !__has_include(<systemd/sd-bus.h>)
#error "sd-bus development headers not found; install them: apt-get install libsystemd-dev"
#endif

#include "../LibraryLoading/castprep_library.h"
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <poll.h>
#include <systemd/sd-bus.h>

#define CASTPREP_SDBUS_SONAME "libsystemd.so.0"

/// The Debian package that installs CASTPREP_SDBUS_SONAME, for fix hints.
#define CASTPREP_SDBUS_PACKAGE "libsystemd0"

#define CASTPREP_SDBUS_FUNCTIONS(X)                                                                                  \
    X(int, sd_bus_open_user, (sd_bus **ret), (ret))                                                                  \
    X(int, sd_bus_request_name, (sd_bus *bus, const char *name, uint64_t flags), (bus, name, flags))                 \
    X(int, sd_bus_add_object, (sd_bus *bus, sd_bus_slot **slot, const char *path, sd_bus_message_handler_t callback,  \
                               void *userdata), (bus, slot, path, callback, userdata))                               \
    X(int, sd_bus_get_fd, (sd_bus *bus), (bus))                                                                      \
    X(int, sd_bus_get_events, (sd_bus *bus), (bus))                                                                  \
    X(int, sd_bus_get_timeout, (sd_bus *bus, uint64_t *timeout_usec), (bus, timeout_usec))                           \
    X(int, sd_bus_process, (sd_bus *bus, sd_bus_message **r), (bus, r))                                              \
    X(int, sd_bus_flush, (sd_bus *bus), (bus))                                                                       \
    X(sd_bus *, sd_bus_flush_close_unref, (sd_bus *bus), (bus))                                                      \
    X(sd_bus_slot *, sd_bus_slot_unref, (sd_bus_slot *slot), (slot))                                                 \
    X(const char *, sd_bus_message_get_member, (sd_bus_message *m), (m))                                            \
    X(const char *, sd_bus_message_get_interface, (sd_bus_message *m), (m))                                         \
    X(int, sd_bus_message_read_basic, (sd_bus_message *m, char type, void *p), (m, type, p))                         \
    X(int, sd_bus_message_enter_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents)) \
    X(int, sd_bus_message_exit_container, (sd_bus_message *m), (m))                                                  \
    X(int, sd_bus_message_peek_type, (sd_bus_message *m, char *type, const char **contents), (m, type, contents))     \
    X(int, sd_bus_message_new_method_return, (sd_bus_message *call, sd_bus_message **m), (call, m))                  \
    X(int, sd_bus_message_new_signal, (sd_bus *bus, sd_bus_message **m, const char *path, const char *interface,      \
                                       const char *member), (bus, m, path, interface, member))                       \
    X(int, sd_bus_message_append_basic, (sd_bus_message *m, char type, const void *p), (m, type, p))                 \
    X(int, sd_bus_message_open_container, (sd_bus_message *m, char type, const char *contents), (m, type, contents))  \
    X(int, sd_bus_message_close_container, (sd_bus_message *m), (m))                                                 \
    X(int, sd_bus_send, (sd_bus *bus, sd_bus_message *m, uint64_t *cookie), (bus, m, cookie))                        \
    X(sd_bus_message *, sd_bus_message_unref, (sd_bus_message *m), (m))                                              \
    X(int, sd_bus_error_set, (sd_bus_error *e, const char *name, const char *message), (e, name, message))

/// The resolved functions, or the reason they could not be resolved.
typedef struct castprep_sdbus_api {
    /// Whether loading worked, and if not why (see castprep_library.h).
    castprep_library_status status;
    CASTPREP_SDBUS_FUNCTIONS(CASTPREP_LIBRARY_FIELD)
} castprep_sdbus_api;

/// Opens the library and resolves every function of the table (see castprep_library.h).
static inline void castprep_sdbus_resolve(castprep_sdbus_api *api) {
    const char *library = CASTPREP_SDBUS_SONAME;
    void *handle = castprep_library_open(&api->status, "libsystemd (" CASTPREP_SDBUS_SONAME ")", library);
    if (handle == NULL) return;
    CASTPREP_SDBUS_FUNCTIONS(CASTPREP_LIBRARY_RESOLVE_FUNCTION)
}

CASTPREP_LIBRARY_ACCESSORS(sdbus, castprep_sdbus_api, castprep_sdbus_resolve, "install it: apt-get install " CASTPREP_SDBUS_PACKAGE)

#define CASTPREP_LIBRARY_CHECKED castprep_sdbus_checked
CASTPREP_SDBUS_FUNCTIONS(CASTPREP_LIBRARY_WRAPPER)
#undef CASTPREP_LIBRARY_CHECKED

/// Milliseconds until the bus wants sd_bus_process called again without I/O (sd_bus_get_timeout
/// gives an absolute CLOCK_MONOTONIC time in µs); -1 for no deadline, 0 when it has passed.
static inline int castprep_sdbus_timeout_milliseconds(sd_bus *bus) {
    uint64_t deadline = 0;
    if (castprep_sd_bus_get_timeout(bus, &deadline) < 0 || deadline == UINT64_MAX) return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t current = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    if (deadline <= current) return 0;
    uint64_t milliseconds = (deadline - current + 999u) / 1000u;
    return milliseconds > 60000u ? 60000 : (int)milliseconds;
}

/// sd_bus_error's fields with no need to free, for a handler's ret_error.
static inline int castprep_sdbus_fail(sd_bus_error *error, const char *name, const char *message) {
    int status = castprep_sd_bus_error_set(error, name, message);
    return status < 0 ? status : -EINVAL;
}

/// POLLIN and POLLOUT, for reading sd_bus_get_events.
static const int castprep_sdbus_pollin = POLLIN;
static const int castprep_sdbus_pollout = POLLOUT;

#endif
