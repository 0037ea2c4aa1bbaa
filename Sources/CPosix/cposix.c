// cposix.c: see include/cposix.h.
#define _GNU_SOURCE
#include "cposix.h"

#include <dlfcn.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <spawn.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

int cposix_set_thread_name(const char *name) {
    char truncated[16];
    strncpy(truncated, name, sizeof truncated - 1);
    truncated[sizeof truncated - 1] = '\0';
    return pthread_setname_np(pthread_self(), truncated);
}

int cposix_ensure_standard_descriptors(void) {
    int opened = 0;
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        // open() returns the lowest free descriptor, which is `fd` itself when the lower
        // ones are open; dup2 covers the case where it is not.
        int null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (null < 0) return -1;
        if (null != fd) {
            dup2(null, fd);
            close(null);
        }
        opened++;
    }
    return opened;
}

int cposix_open_for_writing_nonblocking(const char *path, int flags, unsigned mode) {
    int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | flags, (mode_t)mode);
    if (fd < 0) return -1;
    int current = fcntl(fd, F_GETFL);
    if (current != -1) fcntl(fd, F_SETFL, current & ~O_NONBLOCK);
    return fd;
}

int cposix_release_free_memory(void) { return malloc_trim(0); }

int cposix_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}

const char *cposix_signal_abbreviation(int signal) { return sigabbrev_np(signal); }

int cposix_fsetxattr(int descriptor, const char *name, const void *value, unsigned long size) {
    return fsetxattr(descriptor, name, value, size, 0);
}

long cposix_lgetxattr(const char *path, const char *name, void *value, unsigned long size) {
    return (long)lgetxattr(path, name, value, size);
}

const char *cposix_library_path_of(const char *symbol) {
    void *address = dlsym(RTLD_DEFAULT, symbol);
    Dl_info info;
    if (address == NULL || dladdr(address, &info) == 0) return NULL;
    return info.dli_fname;
}
int cposix_pipe_cloexec(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC); }
