import Foundation
import XCTest

/// Compiles C plugins with `cc` into a test's temporary directory, so loading real shared
/// objects needs no prebuilt plugin. Each call writes a new file: glibc shares one loaded
/// image per file, so separate files keep tests' plugin state apart.
enum CPluginBuilder {
    /// The package root, found from this file's path.
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Where jackhost_plugin.h lives.
    static var includeDirectory: String { repositoryRoot.appendingPathComponent("Sources/CJackHostPlugin/include").path }

    /// Compiles `source` (C text) into `directory/lib<name>.so` and returns its path.
    static func build(
        source: String, name: String, defines: [String] = [], in directory: URL,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> String {
        let sourceURL = directory.appendingPathComponent("\(name).c")
        try source.write(to: sourceURL, atomically: true, encoding: .utf8)
        return try build(sourceFile: sourceURL.path, name: name, defines: defines, in: directory, file: file, line: line)
    }

    /// Compiles a C file into `directory/lib<name>.so` and returns its path.
    static func build(
        sourceFile: String, name: String, defines: [String] = [], in directory: URL,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> String {
        let output = directory.appendingPathComponent("lib\(name).so").path
        let arguments =
            [
                "cc", "-std=c11", "-Wall", "-Werror", "-fPIC", "-shared", "-fvisibility=hidden",
                "-I", includeDirectory,
            ] + defines.map { "-D\($0)" } + [sourceFile, "-o", output, "-lm"]
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "cc failed (is a C compiler installed?):\n\(message)", file: file, line: line)
        return output
    }

    /// The CPeak example, compiled from Examples/Plugins/CPeak/cpeak.c.
    static func buildCPeak(in directory: URL) throws -> String {
        try build(
            sourceFile: repositoryRoot.appendingPathComponent("Examples/Plugins/CPeak/cpeak.c").path,
            name: "CPeak", in: directory)
    }

    /// A fresh temporary directory.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-plugin-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// Reads the probe plugin's counters from its loaded image (the same handle the host opened).
struct ProbeReader {
    private let value: @convention(c) (UnsafePointer<CChar>?) -> Int64
    private let text: @convention(c) () -> UnsafePointer<CChar>?

    init(path: String) throws {
        // RTLD_NOLOAD: find the image the host already loaded; never load a second copy.
        let handle = try XCTUnwrap(dlopen(path, RTLD_NOW | RTLD_NOLOAD), "the probe is not loaded")
        value = unsafeBitCast(
            try XCTUnwrap(dlsym(handle, "probe_value")),
            to: (@convention(c) (UnsafePointer<CChar>?) -> Int64).self)
        text = unsafeBitCast(try XCTUnwrap(dlsym(handle, "probe_log")), to: (@convention(c) () -> UnsafePointer<CChar>?).self)
    }

    /// A counter or recorded field by name (see `ProbePlugin.source`).
    subscript(_ name: String) -> Int64 { value(name) }
    /// Every lifecycle call in order, one per line.
    var log: [String] { String(cString: text()!).split(separator: "\n").map(String.init) }
}

/// A C plugin that records every call the host makes, to check the host's side of the ABI.
enum ProbePlugin {
    /// Compile-time switches: PROBE_MODE, PROBE_ABI, PROBE_NULL_PROCESS, PROBE_BAD_DEFAULT, PROBE_SMALL_STRUCT.
    static let source = #"""
        #include <jackhost_plugin.h>
        #include <stdarg.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        #ifndef PROBE_MODE
        #define PROBE_MODE JACKHOST_PLUGIN_MODE_REALTIME
        #endif
        #ifndef PROBE_ABI
        #define PROBE_ABI JACKHOST_PLUGIN_ABI_VERSION
        #endif

        static long long creates, prepares, processes, finishes, destroys, frames, dropped, xruns;
        static long long last_sequence = -1, last_frame_time = -1, last_channels = 0, last_struct_size = 0;
        static long long sum_millis;  /* sum of all samples x 1000, to check the audio itself arrived */
        static long long channel_pointer_table;  /* the block's `channels` pointer, to check zero copy */
        static char log_text[16384];

        static void note(const char *format, ...) {
            size_t used = strlen(log_text);
            va_list arguments;
            va_start(arguments, format);
            vsnprintf(log_text + used, sizeof log_text - used, format, arguments);
            va_end(arguments);
            strncat(log_text, "\n", sizeof log_text - strlen(log_text) - 1);
        }

        __attribute__((visibility("default"))) long long probe_value(const char *name) {
            if (!strcmp(name, "creates")) return creates;
            if (!strcmp(name, "prepares")) return prepares;
            if (!strcmp(name, "processes")) return processes;
            if (!strcmp(name, "finishes")) return finishes;
            if (!strcmp(name, "destroys")) return destroys;
            if (!strcmp(name, "frames")) return frames;
            if (!strcmp(name, "dropped")) return dropped;
            if (!strcmp(name, "xruns")) return xruns;
            if (!strcmp(name, "last_sequence")) return last_sequence;
            if (!strcmp(name, "last_frame_time")) return last_frame_time;
            if (!strcmp(name, "last_channels")) return last_channels;
            if (!strcmp(name, "last_struct_size")) return last_struct_size;
            if (!strcmp(name, "sum_millis")) return sum_millis;
            if (!strcmp(name, "channel_pointer_table")) return channel_pointer_table;
            return -999;
        }

        __attribute__((visibility("default"))) const char *probe_log(void) { return log_text; }

        typedef struct { int reject; } probe_t;

        static void *probe_create(const jackhost_plugin_descriptor_t *descriptor, const jackhost_plugin_key_value_t *pairs,
                                  uint32_t count, char *error, size_t capacity) {
            creates++;
            note("create descriptor=%s", descriptor != NULL && descriptor->plugin_data == (void *)&creates ? "self" : "other");
            for (uint32_t i = 0; i < count; i++) note("option %s=%s", pairs[i].key, pairs[i].value);
            const char *fail = jackhost_plugin_find_option(pairs, count, "fail-create");
            if (fail != NULL && !strcmp(fail, "true")) {
                jackhost_plugin_set_error(error, capacity, "probe was told to fail");
                return NULL;
            }
            probe_t *self = calloc(1, sizeof *self);
            const char *reject = jackhost_plugin_find_option(pairs, count, "reject");
            self->reject = reject != NULL && !strcmp(reject, "true");
            return self;
        }

        static int32_t probe_prepare(void *instance, const jackhost_plugin_format_t *format, char *error, size_t capacity) {
            probe_t *self = instance;
            prepares++;
            note("prepare size=%u channels=%u rate=%.0f", format->struct_size, format->channel_count, format->sample_rate);
            if (self->reject) {
                char message[128];
                snprintf(message, sizeof message, "probe refuses %.0f Hz", format->sample_rate);
                jackhost_plugin_set_error(error, capacity, message);
                return 7;
            }
            return 0;
        }

        __attribute__((unused)) static void probe_process(void *instance, const jackhost_plugin_block_t *block) {
            (void)instance;
            processes++;
            frames += block->frame_count;
            dropped += (long long)block->dropped_frames_before;
            xruns += block->xrun != 0;
            last_sequence = (long long)block->sequence;
            last_frame_time = block->frame_time;
            last_channels = block->channel_count;
            last_struct_size = block->struct_size;
            channel_pointer_table = (long long)(uintptr_t)block->channels;
            for (uint32_t c = 0; c < block->channel_count; c++)
                for (uint32_t i = 0; i < block->frame_count; i++) sum_millis += (long long)(block->channels[c][i] * 1000.0f);
        }

        static void probe_finish(void *instance) { (void)instance; finishes++; note("finish frames=%lld", frames); }

        static void probe_destroy(void *instance) { destroys++; note("destroy"); free(instance); }

        static const jackhost_plugin_option_t options[] = {
            {.name = "label", .type = JACKHOST_PLUGIN_OPTION_STRING, .help = "no default"},
            {.name = "gain", .type = JACKHOST_PLUGIN_OPTION_DOUBLE, .default_value = "1.5", .help = "a number"},
        #ifdef PROBE_BAD_DEFAULT
            {.name = "count", .type = JACKHOST_PLUGIN_OPTION_INT, .default_value = "three", .help = "a whole number"},
        #else
            {.name = "count", .type = JACKHOST_PLUGIN_OPTION_INT, .default_value = "3", .help = "a whole number"},
        #endif
            {.name = "reject", .type = JACKHOST_PLUGIN_OPTION_BOOL, .default_value = "false", .help = "refuse the format"},
            {.name = "fail-create", .type = JACKHOST_PLUGIN_OPTION_BOOL, .default_value = "false", .help = "fail in create"},
        };

        static const jackhost_plugin_descriptor_t descriptor = {
            .abi_version = PROBE_ABI,
        #ifdef PROBE_SMALL_STRUCT
            .struct_size = 40,
        #else
            .struct_size = sizeof(jackhost_plugin_descriptor_t),
        #endif
            .name = "Probe",
            .version = "0.0.1-test",
            .mode = PROBE_MODE,
            .option_count = sizeof options / sizeof options[0],
            .options = options,
            .plugin_data = &creates,
            .create = probe_create,
            .prepare = probe_prepare,
        #ifdef PROBE_NULL_PROCESS
            .process = NULL,
        #else
            .process = probe_process,
        #endif
            .finish = probe_finish,
            .destroy = probe_destroy,
        };

        const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void) { return &descriptor; }
        """#
}
