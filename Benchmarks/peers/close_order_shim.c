/*
 * close_order_shim: an LD_PRELOAD library that unregisters a client's own ports before
 * jack_client_close. It exists to make jackhost measurable with many channels, and as the
 * working demonstration of the fix recommended in BENCHMARKS.md ("Exit deadlock").
 *
 * Why: jack2 1.9.21's jack_client_close stops the client's notification thread first and
 * then asks the server to close the client. The server unregisters each port, and for every
 * port that carries metadata (jackhost sets pretty-name and order on each input) it sends a
 * property-change notification to every client, the closing one included. Nobody reads the
 * closing client's notification socket any more, so after roughly 40 ports' worth of
 * notifications the socket is full, the server's request thread blocks in write(), and the
 * client blocks waiting for the server's reply: both hang for good. Unregistering the ports
 * first, while the notification thread still runs, lets those notifications be consumed.
 *
 * Build: gcc -O2 -shared -fPIC -o close_order_shim.so close_order_shim.c -ldl $(pkg-config --libs jack)
 * Use:   LD_PRELOAD=/path/close_order_shim.so jackhost ...
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jack/jack.h>
#include <stdio.h>
#include <string.h>

int jack_client_close(jack_client_t *client) {
    static int (*real_close)(jack_client_t *);
    if (!real_close) real_close = (int (*)(jack_client_t *))dlsym(RTLD_NEXT, "jack_client_close");
    const char **names = jack_get_ports(client, NULL, NULL, 0);
    if (names) {
        for (size_t i = 0; names[i]; i++) {
            jack_port_t *port = jack_port_by_name(client, names[i]);
            if (port && jack_port_is_mine(client, port)) jack_port_unregister(client, port);
        }
        jack_free(names);
    }
    return real_close(client);
}
