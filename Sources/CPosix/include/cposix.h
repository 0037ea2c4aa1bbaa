// cposix.h: the POSIX calls Swift cannot import as they are (GNU extensions hidden behind
// _GNU_SOURCE, variadic functions), each behind a plain C function.
#ifndef JACKHOST_CPOSIX_H
#define JACKHOST_CPOSIX_H

/// Names the calling thread (Linux keeps the first 15 bytes; `top -H` and debuggers show it).
/// Returns 0 or an errno value.
int cposix_set_thread_name(const char *name);

/// Makes sure descriptors 0, 1 and 2 are open, opening /dev/null on each one that is closed,
/// as daemons do. Returns how many it had to open.
///
/// Why: a process started with stdout or stderr closed (`jackhost ... >&-`) hands the next
/// descriptor it opens to whatever asks first. libjack opens its metadata database (Berkeley
/// DB under /dev/shm) when a client starts; it then sits on 1 or 2, and audio or messages
/// written "to stdout" corrupt the server's database. Call this before any libjack or
/// libsndfile call.
int cposix_ensure_standard_descriptors(void);

/// Opens `path` for writing without blocking: a FIFO with no reader fails at once with ENXIO
/// instead of waiting. `flags` are added to O_WRONLY | O_NONBLOCK | O_CLOEXEC; O_NONBLOCK is
/// cleared again on the returned descriptor. Returns the descriptor, or -1 with errno set.
///
/// Why: open(2) on a FIFO blocks until a reader appears, and SA_RESTART restarts it after a
/// signal, so a process waiting there ignores SIGINT and SIGTERM. Polling lets it stop.
int cposix_open_for_writing_nonblocking(const char *path, int flags, unsigned mode);

/// Gives free heap memory back to the kernel (glibc's malloc_trim(0) over every arena).
/// Returns 1 when some was released.
///
/// Why: glibc keeps freed small blocks in its arenas, so a process whose queue grew during a
/// stall keeps that resident memory after the queue has drained. Call it from an ordinary
/// thread only: it walks every arena under their locks.
int cposix_release_free_memory(void);

#include <spawn.h>

/// Adds "close every descriptor from `lowest` up" to a posix_spawn file-action list
/// (glibc's posix_spawn_file_actions_addclosefrom_np, a GNU extension). Returns 0 or an errno.
///
/// Why: a spawned helper must not inherit the parent's files (a take, its JACK sockets).
int cposix_spawn_add_closefrom(posix_spawn_file_actions_t *actions, int lowest);

/// The abbreviated name of a signal ("SEGV" for SIGSEGV), or NULL (glibc's sigabbrev_np).
const char *cposix_signal_abbreviation(int signal);

/// Sets the extended attribute `name` of the open file `descriptor` to `size` bytes of `value`.
/// Returns 0, or -1 with errno set (ENOTSUP where the file system stores none).
///
/// Why: <sys/xattr.h> is not part of Swift's Glibc module. The corresponding C function is
/// `fsetxattr`.
int cposix_fsetxattr(int descriptor, const char *name, const void *value, unsigned long size);

/// Reads the extended attribute `name` of `path` (not following a final symbolic link) into
/// `value`. Returns its length, or -1 with errno set. The corresponding C function is `lgetxattr`.
long cposix_lgetxattr(const char *path, const char *name, void *value, unsigned long size);

/// The path of the shared library that defines `symbol` in this process, or NULL.
///
/// Why: dladdr(3) and Dl_info are GNU extensions Swift's Glibc does not import. The
/// corresponding C functions are `dlsym` and `dladdr`.
const char *cposix_library_path_of(const char *symbol);
/// Creates a pipe whose two ends are close-on-exec from the start (glibc's pipe2 with
/// O_CLOEXEC, which Swift's Glibc module does not declare). Returns 0, or -1 with errno.
///
/// Why: no child that another thread spawns meanwhile may inherit either end (a hook's output
/// relay must see EOF when the hook and its children are done).
int cposix_pipe_cloexec(int descriptors[2]);

#endif
