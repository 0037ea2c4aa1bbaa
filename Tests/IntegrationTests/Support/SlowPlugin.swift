import Foundation
import JackHostTesting
import XCTest

/// A deferred C plugin that sleeps 100 ms in every process() call.
enum SlowPlugin {
    static let source = """
        #include <jackhost_plugin.h>
        #include <stdlib.h>
        #include <unistd.h>
        static void *create(const jackhost_plugin_descriptor_t *d, const jackhost_plugin_key_value_t *p, uint32_t n, char *e, size_t c) {
            (void)d; (void)p; (void)n; (void)e; (void)c;
            return calloc(1, 1);
        }
        static int32_t prepare(void *i, const jackhost_plugin_format_t *f, char *e, size_t c) { (void)i; (void)f; (void)e; (void)c; return 0; }
        static void process(void *i, const jackhost_plugin_block_t *b) { (void)i; (void)b; usleep(100000); }
        static void finish(void *i) { (void)i; }
        static void destroy(void *i) { free(i); }
        static const jackhost_plugin_descriptor_t descriptor = {
            .abi_version = JACKHOST_PLUGIN_ABI_VERSION, .struct_size = sizeof(jackhost_plugin_descriptor_t),
            .name = "SlowPlugin", .version = "1.0.0", .mode = JACKHOST_PLUGIN_MODE_DEFERRED,
            .option_count = 0, .options = NULL, .plugin_data = NULL,
            .create = create, .prepare = prepare, .process = process, .finish = finish, .destroy = destroy,
        };
        __attribute__((visibility("default"))) const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void) { return &descriptor; }
        """

    static func build(in directory: URL) throws -> String {
        let sourcePath = directory.appendingPathComponent("slow.c").path
        try source.write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let output = directory.appendingPathComponent("libSlowPlugin.so").path
        let include = ExamplePlugins.repositoryRoot.appendingPathComponent("Sources/CJackHostPlugin/include").path
        let result = try JACKFixture.run("cc", ["-std=c11", "-fPIC", "-shared", "-I", include, sourcePath, "-o", output])
        XCTAssertEqual(result.status, 0, "cc: \(result.stderr)")
        return output
    }
}
