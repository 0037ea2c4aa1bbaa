// The `jackhost` program's first instruction: its signal handlers go in before the Swift runtime
// and its libraries start up (they take about 10 ms on these machines), so that a signal sent in the
// program's first milliseconds finalises or is honoured instead of killing it with its default
// action. Only the executable links this target; the library and the test bundles do not.
#include "csignals.h"
#include "jackhost_startup.h"

static void jackhost_install_signal_handlers_first(void) { csignals_install_stop_handlers(); }

// .preinit_array runs before every shared library's initialisers (libjack's, gnutls's, the Swift
// runtime's), not only before main: only an executable may have one, which is why this is here.
__attribute__((section(".preinit_array"), used)) static void (*const jackhost_preinit)(void) = jackhost_install_signal_handlers_first;

int jackhost_startup_linked(void) { return 1; }
