// Shim for libjack: only what Swift cannot import or express directly.
#ifndef CJACK_SHIM_H
#define CJACK_SHIM_H

#include <jack/jack.h>
#include <jack/metadata.h>
#include <jack/uuid.h>
#include <jack/statistics.h>
#include <jack/midiport.h>
#include <stddef.h>

/// Why: `jack_client_open` is variadic, and Swift does not import variadic C
/// functions. This fixed signature passes the server name (with `JackServerName`)
/// only when one is given, so the default server is used otherwise.
static inline jack_client_t *cjack_client_open(const char *client_name,
                                               jack_options_t options,
                                               jack_status_t *status,
                                               const char *server_name) {
    if (server_name != NULL) {
        return jack_client_open(client_name, (jack_options_t)(options | JackServerName),
                                status, server_name);
    }
    return jack_client_open(client_name, options, status);
}

// Why: RealtimeSanitizer's entry points are only present when its runtime is
// linked (see docs/REALTIME.md). Declaring them weak lets an ordinary build run
// without the runtime and pay one branch per cycle.
extern void __rtsan_realtime_enter(void) __attribute__((weak));
extern void __rtsan_realtime_exit(void) __attribute__((weak));

/// Marks the start of the real-time section (the process callback).
static inline void cjack_rt_enter(void) {
    if (__rtsan_realtime_enter) __rtsan_realtime_enter();
}

/// Marks the end of the real-time section.
static inline void cjack_rt_exit(void) {
    if (__rtsan_realtime_exit) __rtsan_realtime_exit();
}

/// Real-time safe: whether transport rolls. Why in C: comparing the imported
/// `jack_transport_state_t` in Swift asks the runtime for the enum's metadata
/// (swift_getForeignTypeMetadata), which RealtimeSanitizer flags in the callback.
static inline int cjack_transport_rolling(jack_client_t *client) {
    return jack_transport_query(client, NULL) == JackTransportRolling;
}

/// Why: tells tests and `jackhost --version` whether this binary was linked
/// with RealtimeSanitizer, which Swift cannot ask of a weak symbol directly.
static inline int cjack_rt_sanitizer_linked(void) {
    return __rtsan_realtime_enter != NULL;
}

#endif
