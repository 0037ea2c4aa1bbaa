/* stall_write_shim: an LD_PRELOAD shim for the stalling-disk benchmark (the integration
 * test StallingDiskTests compiles this same file). The first write(2) to a file whose path contains
 * $STALL_PATH, once $STALL_AFTER_BYTES bytes have gone to it, sleeps $STALL_SECONDS seconds: a
 * disk that blocks, as an SD card, a USB stick or a network share does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static ssize_t (*real_write)(int, const void *, size_t);
static long long written;
static int stalled;
ssize_t write(int fd, const void *buffer, size_t count) {
    if (real_write == NULL) real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    const char *match = getenv("STALL_PATH");
    if (match != NULL && !stalled && fd > 2) {
        char link[64], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t length = readlink(link, target, sizeof target - 1);
        if (length > 0) {
            target[length] = 0;
            if (strstr(target, match) != NULL) {
                written += (long long)count;
                const char *after = getenv("STALL_AFTER_BYTES");
                if (written >= (after ? atoll(after) : 0)) {
                    stalled = 1;
                    const char *seconds = getenv("STALL_SECONDS");
                    sleep(seconds ? (unsigned)atoi(seconds) : 3);
                }
            }
        }
    }
    return real_write(fd, buffer, count);
}

