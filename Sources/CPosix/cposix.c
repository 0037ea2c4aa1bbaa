// cposix.c: see include/cposix.h.
#define _GNU_SOURCE
#include "cposix.h"

#include <pthread.h>
#include <string.h>

int cposix_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}
