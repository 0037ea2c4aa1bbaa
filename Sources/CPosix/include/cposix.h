// cposix.h: the POSIX calls Swift cannot import as they are (GNU extensions hidden behind
// _GNU_SOURCE, variadic functions), each behind a plain C function.
#ifndef JACKHOST_CPOSIX_H
#define JACKHOST_CPOSIX_H

/// Names the calling thread (Linux keeps the first 15 bytes; `top -H` and debuggers show it).
/// Returns 0 or an errno value.
int cposix_set_thread_name(const char *name);

#endif
