// Helpers the Swift SDK's test driver (PluginTestDriver, in JackHostPluginTesting) needs and
// Swift cannot express.
// Not part of the plugin ABI: C plugins need only jackhost_plugin.h.
#ifndef JACKHOST_PLUGIN_SDK_H
#define JACKHOST_PLUGIN_SDK_H

// Why: PluginTestDriver marks a real-time plugin's process() calls as real-time
// sections, so a plugin's tests linked with LLVM's RealtimeSanitizer runtime
// report any allocation, lock or system call there, exactly as jackhost does
// around its process callback (docs/REALTIME.md). Swift cannot declare weak
// symbols; declared weak here, an ordinary build runs without the runtime and
// pays one branch.
extern void __rtsan_realtime_enter(void) __attribute__((weak));
extern void __rtsan_realtime_exit(void) __attribute__((weak));

/// Marks the start of a real-time section when RealtimeSanitizer is linked.
static inline void jackhost_sdk_realtime_enter(void) {
    if (__rtsan_realtime_enter) __rtsan_realtime_enter();
}

/// Marks the end of a real-time section when RealtimeSanitizer is linked.
static inline void jackhost_sdk_realtime_exit(void) {
    if (__rtsan_realtime_exit) __rtsan_realtime_exit();
}

/// Whether RealtimeSanitizer is linked into this process.
static inline int jackhost_sdk_realtime_sanitizer_linked(void) {
    return __rtsan_realtime_enter != 0;
}

#endif
