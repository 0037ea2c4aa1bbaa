/*
 * jackhost_plugin.h: the JackHost plugin interface, ABI version 2 (version 1
 * plugins still load).
 *
 * This header is the whole contract between JackHost and a plugin. A plugin
 * is a shared object (a .so built with -shared -fPIC, or a SwiftPM `.dynamic`
 * library) that exports ONE symbol with C linkage:
 *
 *     const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void);
 *
 * Before loading, the host reads the file's ELF header and its ELF dynamic
 * symbol table (.dynsym) with plain reads, and refuses without loading it a
 * file that is not a shared object for the host's class and machine, or whose
 * `jackhost_plugin_descriptor` is missing, hidden or not a function (STT_FUNC
 * or STT_GNU_IFUNC): exporting it as data is refused, not called.
 *
 * The host then loads the file with dlopen(RTLD_NOW | RTLD_LOCAL), looks the
 * symbol up, calls it once, and checks `abi_version` and `struct_size` before
 * it reads anything else. Nothing else crosses the boundary: no Swift types,
 * no C++, no host symbols the plugin may call.
 *
 * Loading runs the library's code: dlopen runs its constructors (the ELF
 * .init_array, Swift and C++ static initialisers, __attribute__((constructor))
 * functions) and those of the libraries it depends on. That includes
 * `jackhost plugin inspect`, which calls jackhost_plugin_descriptor() but never
 * create, prepare or process. Inspect and load only files you trust, and keep
 * constructors free of side effects.
 *
 * Lifecycle of one instance (every call happens-after the previous one, so a
 * plugin needs no locks for its own state):
 *
 *     create   -> an instance, or NULL with a reason          (ordinary thread)
 *     prepare  -> 0 to accept the stream format, else reason  (ordinary thread)
 *     process  ... once per block                             (see `mode`)
 *     finish   -> after the last block; only after an accepted prepare
 *     [prepare, process..., finish] may repeat: after losing its server, the
 *                 host reconnects and, if the rate or channel count changed,
 *                 prepares the instance again with the new format
 *     destroy  -> frees the instance; called when the host releases it (the
 *                 host may skip it at process exit, so write results in
 *                 finish, not destroy)
 *
 * The host never unloads a plugin (no dlclose): a Swift runtime cannot
 * unregister the metadata of an unloaded image.
 *
 * Version 2 appended to the descriptor: declared results, create2() (which
 * receives the host's services: logging, the frame clock, publishing results,
 * and a status that tells a refused option from a failure) and
 * handle_event(). A version 1 plugin (abi_version 1, the version 1
 * struct_size) still loads; it gets no events, services or results.
 *
 * Versioning: JACKHOST_PLUGIN_ABI_VERSION changes when any existing field
 * changes meaning, type or position. Fields may be appended to the end of
 * the descriptor, the format and the block without a version change; each of
 * those structs starts with `struct_size`, so either side can tell which
 * fields the other knows. A reader must never read past `struct_size`.
 * See docs/PLUGINS.md for the policy in full.
 *
 * Layout: plain C, natural alignment, no packing. Sources/CJackHostPlugin/
 * jackhost_plugin.c pins the version 1 layout with static assertions.
 */
#ifndef JACKHOST_PLUGIN_H
#define JACKHOST_PLUGIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The ABI version this header describes. A host loads plugins of this version
 * and of every earlier one it lists in JACKHOST_PLUGIN_ABI_OLDEST; it refuses
 * newer ones.
 */
#define JACKHOST_PLUGIN_ABI_VERSION 2u

/** The oldest ABI version a host built from this header still loads. */
#define JACKHOST_PLUGIN_ABI_OLDEST 1u

/** The name of the one symbol every plugin exports. */
#define JACKHOST_PLUGIN_ENTRY_SYMBOL "jackhost_plugin_descriptor"

/**
 * The name of the symbol a Swift plugin also exports (the Swift SDK emits it):
 * `const char *jackhost_plugin_swift_version(void)`, the Swift compiler version
 * it was built with ("6.3.1"). Swift has no stable ABI on Linux and a Swift
 * plugin shares the host's runtime, so a host refuses a plugin whose version
 * differs from its own. Optional and outside the descriptor: C plugins do not
 * export it and are not checked; it changes no ABI version.
 */
#define JACKHOST_PLUGIN_SWIFT_VERSION_SYMBOL "jackhost_plugin_swift_version"

/** Bytes the host provides in every error buffer (including the final NUL). */
#define JACKHOST_PLUGIN_ERROR_CAPACITY 1024u

/* ---- Delivery modes (`jackhost_plugin_descriptor_t.mode`) --------------- */

/**
 * process() runs INSIDE JACK's real-time process callback, once per cycle,
 * with pointers straight into JACK's port buffers (zero copy). Its deadline is
 * one period (5.3 ms at 256 frames and 48 kHz), shared with everything else
 * in the cycle. In this mode process() MUST NOT:
 *   - allocate or free memory (malloc, new, Swift arrays/strings/classes,
 *     boxing into `any` existentials, escaping closures);
 *   - take locks or wait (mutexes, condition variables, semaphores, Swift
 *     `Mutex`, `DispatchQueue.sync`, lazily initialised globals or `static let`s,
 *     whose first access takes a lock);
 *   - make system calls or do I/O (printf, write, files, sockets, sleep,
 *     `print`, `CommandLine.arguments`);
 *   - write into the channel buffers (other JACK clients read the same memory).
 * Allocate and fault in everything in prepare(). Publish results to other
 * threads through atomics, or keep them until finish(). Builds of jackhost
 * linked with RealtimeSanitizer abort with a report on any violation.
 */
#define JACKHOST_PLUGIN_MODE_REALTIME 0u

/**
 * process() runs on the plugin's own worker thread, with audio the host copied
 * out of the real-time thread through a lock-free ring owned by this plugin.
 * It may allocate, lock and do I/O. If it falls behind and the ring fills,
 * whole cycles are dropped for this plugin only; the next block's
 * `dropped_frames_before` says how many frames were lost before it.
 */
#define JACKHOST_PLUGIN_MODE_DEFERRED 1u

/* ---- Option types (`jackhost_plugin_option_t.type`) --------------------- */

/** Any text. */
#define JACKHOST_PLUGIN_OPTION_STRING 0u
/** A decimal integer that fits int64_t, with an optional sign: "-12", "480". */
#define JACKHOST_PLUGIN_OPTION_INT 1u
/** A finite decimal number, exponent allowed: "0.5", "-3", "1e-3". */
#define JACKHOST_PLUGIN_OPTION_DOUBLE 2u
/** One of true/false, yes/no, on/off, 1/0 (any letter case). */
#define JACKHOST_PLUGIN_OPTION_BOOL 3u

/* ---- Types -------------------------------------------------------------- */

/** One option a plugin accepts, as users write it: `PATH:name=value,...`. */
typedef struct {
    /** The key, e.g. "output": letters, digits, '-' and '_'. Unique in the plugin. */
    const char *name;
    /** One of JACKHOST_PLUGIN_OPTION_*. The host checks values against it before create(). */
    uint32_t type;
    /** Reserved; set to 0. */
    uint32_t reserved;
    /**
     * The default, written as a user would write the value ("20", "true"), or
     * NULL for "no default": the option is then absent from create()'s pairs
     * unless the user gives it. The host checks defaults against `type` at load.
     */
    const char *default_value;
    /** One line for `jackhost plugin inspect`. May be NULL. */
    const char *help;
} jackhost_plugin_option_t;

/** One option value handed to create(). Both strings are NUL-terminated and valid only during the call. */
typedef struct {
    /** A declared option name. */
    const char *key;
    /** The value, already checked against the option's type; booleans arrive as "true" or "false". */
    const char *value;
} jackhost_plugin_key_value_t;

/**
 * The stream a plugin will receive, handed to prepare(): always 32-bit float
 * samples, non-interleaved (one buffer per channel), native endianness.
 */
typedef struct {
    /** sizeof(jackhost_plugin_format_t) as the host knows it. */
    uint32_t struct_size;
    /** The number of channels (1 ... 1024); every block has exactly this many. */
    uint32_t channel_count;
    /** Frames per second, e.g. 48000.0. */
    double sample_rate;
} jackhost_plugin_format_t;

/**
 * One block of audio, handed to process(). The struct and every pointer in it
 * are valid only during the call: copy what you need, keep no pointer.
 */
typedef struct {
    /** sizeof(jackhost_plugin_block_t) as the host knows it. */
    uint32_t struct_size;
    /** Channels in the block; equal to the format's channel_count. */
    uint32_t channel_count;
    /**
     * channel_count pointers, each to frame_count samples of one channel
     * (channels[0] is the host's in_1). Read-only: never write through them.
     */
    const float *const *channels;
    /** Frames in every channel buffer: usually JACK's period, shorter for the last block of a timed run. */
    uint32_t frame_count;
    /** JACK's frame time at the block's first frame; wraps at 2^32. */
    uint32_t frame_time;
    /** JACK's microsecond clock at the start of the cycle. */
    uint64_t microseconds;
    /** The cycle's number, from 0 at activation. Gaps mean cycles this plugin lost (deferred mode). */
    uint64_t sequence;
    /** Nonzero when the server reported an xrun since the previous cycle: the audio is discontinuous here. */
    uint32_t xrun;
    /** Reserved; 0. */
    uint32_t reserved;
    /**
     * Frames lost between the previous block and this one because this
     * plugin's ring was full. Always 0 in real-time mode.
     */
    uint64_t dropped_frames_before;
} jackhost_plugin_block_t;

/* ---- ABI version 2: events, host services and results ------------------ */

/** An xrun: `value` is the server's xrun count since the take began. */
#define JACKHOST_PLUGIN_EVENT_XRUN 1u
/** The period changed: `value` is the new number of frames per cycle. */
#define JACKHOST_PLUGIN_EVENT_BUFFER_SIZE 2u
/** The sample rate changed: `sample_rate` is the new rate. */
#define JACKHOST_PLUGIN_EVENT_SAMPLE_RATE 3u
/** The server went away; no block comes until JACKHOST_PLUGIN_EVENT_SERVER_RESTORED. */
#define JACKHOST_PLUGIN_EVENT_SERVER_LOST 4u
/** The server is back and blocks flow again. */
#define JACKHOST_PLUGIN_EVENT_SERVER_RESTORED 5u
/** The capture ports changed: `value` is the new channel count (a prepare() follows). */
#define JACKHOST_PLUGIN_EVENT_ROUTE_CHANGED 6u
/** Freewheeling started (`value` 1: cycles run as fast as possible) or stopped (0). */
#define JACKHOST_PLUGIN_EVENT_FREEWHEEL 7u

/**
 * Something that happened to the stream, handed to handle_event(). Valid only
 * during the call. Unknown kinds must be ignored: new kinds may be added
 * without a version change.
 */
typedef struct {
    /** sizeof(jackhost_plugin_event_t) as the host knows it. */
    uint32_t struct_size;
    /** One of JACKHOST_PLUGIN_EVENT_*. */
    uint32_t kind;
    /** The kind's number (see each kind); 0 when it has none. */
    uint64_t value;
    /** For JACKHOST_PLUGIN_EVENT_SAMPLE_RATE, the new rate; else 0. */
    double sample_rate;
} jackhost_plugin_event_t;

/** Log levels for jackhost_host_t.log. */
#define JACKHOST_PLUGIN_LOG_ERROR 0u
#define JACKHOST_PLUGIN_LOG_WARNING 1u
#define JACKHOST_PLUGIN_LOG_INFO 2u
#define JACKHOST_PLUGIN_LOG_DEBUG 3u

/**
 * One named value a plugin publishes, declared in the descriptor so the host
 * can lay out its storage before the first block (publishing is then
 * real-time safe).
 */
typedef struct {
    /**
     * Dotted lower-case name, e.g. "loudness.momentary" or "frequency.hz":
     * letters, digits, '.', '-' and '_'. Unique in the plugin.
     */
    const char *name;
    /** The unit shown next to the value, e.g. "LUFS", "Hz"; may be NULL. */
    const char *unit;
    /** One line for `jackhost plugin inspect`; may be NULL. */
    const char *help;
} jackhost_plugin_result_t;

typedef struct jackhost_host_s jackhost_host_t;

/**
 * What the host offers a plugin (ABI version 2), handed to create2(). It stays
 * valid until destroy() returns. Every function takes the struct itself as its
 * first argument.
 */
struct jackhost_host_s {
    /** sizeof(jackhost_host_t) as the host knows it. Read no field past it. */
    uint32_t struct_size;
    /** Reserved; 0. */
    uint32_t reserved;
    /** The host's own data. Plugins never read it. */
    void *host_data;
    /**
     * Prints `message` (one line, UTF-8) on jackhost's stderr at `level`,
     * prefixed with the plugin's name. NOT real-time safe: call it from
     * create, prepare, finish, or a deferred plugin's process/handle_event.
     */
    void (*log)(const jackhost_host_t *host, uint32_t level, const char *message);
    /**
     * The stream's frame clock: frames of the take before the block being
     * processed now (or, between blocks, before the next one), including
     * frames this plugin lost to drops. Real-time safe.
     */
    uint64_t (*frame_clock)(const jackhost_host_t *host);
    /**
     * Publishes the latest value of result number `index` (its position in
     * the descriptor's `results`). Real-time safe: one atomic store. The host
     * shows it in the meter display and the summary, and writes it with
     * `--results FILE`. An index out of range is ignored.
     */
    void (*publish)(const jackhost_host_t *host, uint32_t index, double value);
};

/** create2() status: created. */
#define JACKHOST_PLUGIN_CREATED 0
/** create2() status: an option value is unacceptable (the user's mistake; jackhost exits 2). */
#define JACKHOST_PLUGIN_REFUSED_OPTION 1
/** create2() status: creation failed for another reason (jackhost exits 1). */
#define JACKHOST_PLUGIN_FAILED 2

typedef struct jackhost_plugin_descriptor_s jackhost_plugin_descriptor_t;

/**
 * Everything the host needs to know about a plugin. The plugin owns it; it
 * must stay valid and unchanged for as long as the image is loaded.
 */
struct jackhost_plugin_descriptor_s {
    /** JACKHOST_PLUGIN_ABI_VERSION as the plugin was built. Checked first. */
    uint32_t abi_version;
    /** sizeof(jackhost_plugin_descriptor_t) as the plugin was built. The host refuses a smaller value. */
    uint32_t struct_size;
    /** The plugin's name, e.g. "FrequencyEstimator". Shown in reports and errors. Not NULL. */
    const char *name;
    /** The plugin's own version, e.g. "1.2.0". Not NULL. */
    const char *version;
    /** JACKHOST_PLUGIN_MODE_REALTIME or JACKHOST_PLUGIN_MODE_DEFERRED. */
    uint32_t mode;
    /** The number of entries in `options`. */
    uint32_t option_count;
    /** The options the plugin accepts; NULL when option_count is 0. */
    const jackhost_plugin_option_t *options;
    /** Opaque data for the plugin's own use (handed back to create). The host never reads it. */
    void *plugin_data;

    /**
     * Creates an instance. `pairs` holds one entry for every option that has a
     * value: the user's value, else the declared default (options without a
     * default that the user did not give are absent). Keys are unique and
     * values already match their type. Return NULL on failure after writing a
     * one-line reason (NUL-terminated, at most `error_capacity` bytes with the
     * NUL) into `error`. Ordinary thread.
     */
    void *(*create)(const jackhost_plugin_descriptor_t *descriptor,
                    const jackhost_plugin_key_value_t *pairs, uint32_t pair_count,
                    char *error, size_t error_capacity);

    /**
     * Accepts or refuses the stream format, before the first block (and again
     * after a finish() if the host reconnects with a different format).
     * Allocate and touch everything process() needs here. Return 0 to accept;
     * any other value refuses it after writing a one-line reason into `error`,
     * and the host then does not start. Ordinary thread.
     */
    int32_t (*prepare)(void *instance, const jackhost_plugin_format_t *format,
                       char *error, size_t error_capacity);

    /**
     * Receives one block. In JACKHOST_PLUGIN_MODE_REALTIME this runs on JACK's
     * real-time thread and must obey the rules above that mode's definition;
     * in JACKHOST_PLUGIN_MODE_DEFERRED it runs on the plugin's worker thread.
     */
    void (*process)(void *instance, const jackhost_plugin_block_t *block);

    /** Called after the last block of an accepted prepare(). Write results here. Ordinary thread. */
    void (*finish)(void *instance);

    /** Frees the instance. No other call follows. Ordinary thread. */
    void (*destroy)(void *instance);

    /* ---- ABI version 2. A host reads these only when abi_version >= 2 and
     *      struct_size covers them; every one may be 0/NULL. ---- */

    /** The number of entries in `results`. */
    uint32_t result_count;
    /** Reserved; 0. */
    uint32_t reserved_v2;
    /** The results the plugin publishes (see jackhost_host_t.publish); NULL when result_count is 0. */
    const jackhost_plugin_result_t *results;

    /**
     * Creates an instance, like create(), with the host's services. When set,
     * the host calls it instead of create(). On failure return NULL, write a
     * one-line reason into `error` and set `*status` to
     * JACKHOST_PLUGIN_REFUSED_OPTION (an option value you cannot accept:
     * jackhost exits 2) or JACKHOST_PLUGIN_FAILED (exit 1). Ordinary thread.
     */
    void *(*create2)(const jackhost_plugin_descriptor_t *descriptor,
                     const jackhost_plugin_key_value_t *pairs, uint32_t pair_count,
                     const jackhost_host_t *host, int32_t *status,
                     char *error, size_t error_capacity);

    /**
     * Receives an event. Called on the thread that calls process(), just
     * before the next block (and before finish() for events after the last
     * block), never concurrently with process(): a real-time plugin's
     * handler is under the real-time rules. May be NULL.
     */
    void (*handle_event)(void *instance, const jackhost_plugin_event_t *event);

    /**
     * Blocks of exactly this many frames (the last of a run may be shorter),
     * rebuffered by the host; 0 takes JACK's periods as they come. Deferred
     * plugins only: a real-time plugin that asks is refused at load.
     */
    uint32_t block_frames;
    /** Reserved; 0. */
    uint32_t reserved_v2b;
    /**
     * The sample rate to receive, converted by the host with libsoxr (high
     * quality); 0 takes the server's rate. prepare() gets this rate. Deferred
     * plugins only. Users may override both, and pick channels, with the
     * host's own option keys: PATH:block-frames=N,sample-rate=HZ,channels=1-2.
     */
    double sample_rate;
};

/** The type of the entry symbol, for hosts that look it up with dlsym. */
typedef const jackhost_plugin_descriptor_t *(*jackhost_plugin_entry_t)(void);

/* ---- Helpers for C plugins (header-only, so a plugin needs no library) --- */

/** Copies `message` into an error buffer, truncating it and always NUL-terminating. */
static inline void jackhost_plugin_set_error(char *error, size_t capacity, const char *message) {
    if (error == NULL || capacity == 0) return;
    size_t length = strlen(message);
    if (length >= capacity) length = capacity - 1;
    memcpy(error, message, length);
    error[length] = '\0';
}

/** The value of option `key` among create()'s pairs, or NULL when absent. */
static inline const char *jackhost_plugin_find_option(const jackhost_plugin_key_value_t *pairs,
                                                      uint32_t pair_count, const char *key) {
    for (uint32_t i = 0; i < pair_count; i++) {
        if (strcmp(pairs[i].key, key) == 0) return pairs[i].value;
    }
    return NULL;
}

/*
 * The entry point's prototype, so a C plugin's definition is checked against
 * it. Hidden from Swift, which imports this header too: Swift plugins define
 * the symbol with `@c(jackhost_plugin_descriptor)`, and the host finds it with
 * dlsym, so neither needs the declaration.
 */
#ifndef __swift__
#if defined(__GNUC__)
__attribute__((visibility("default")))
#endif
const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* JACKHOST_PLUGIN_H */
