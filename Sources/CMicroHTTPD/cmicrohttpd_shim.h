// libmicrohttpd, for the --http live view. MHD_start_daemon is variadic, which Swift cannot
// call: jh_mhd_start fixes the one configuration jackhost uses.
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Starts a daemon on an already bound and listening socket: one thread per connection (a
/// stalled viewer blocks only its own thread), at most `connection_limit` connections (more
/// are refused at accept), each closed after `timeout_seconds` without progress, with
/// `memory_limit` bytes for its request and headers (a larger request gets 431/413).
static inline struct MHD_Daemon *jh_mhd_start(
    int listen_socket, MHD_AccessHandlerCallback handler, void *context,
    unsigned int connection_limit, unsigned int per_ip_limit, unsigned int timeout_seconds, size_t memory_limit,
    size_t thread_stack_size)
{
    return MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL,
        0, NULL, NULL, handler, context,
        MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_socket,
        MHD_OPTION_CONNECTION_LIMIT, connection_limit,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, memory_limit,
        MHD_OPTION_THREAD_STACK_SIZE, thread_stack_size,
        MHD_OPTION_END);
}
