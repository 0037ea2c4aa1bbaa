/*
 * Tests CPeak the way jackhost uses it: dlopen the .so, check the descriptor,
 * create with options, prepare, feed blocks, finish, read the output.
 * Usage: test_cpeak build/libCPeak.so
 */
#define _DEFAULT_SOURCE /* M_PI, mkstemp */
#include <jackhost_plugin.h>

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;

#define CHECK(condition, ...)                                   \
    do {                                                        \
        if (!(condition)) {                                     \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                       \
            fprintf(stderr, "\n");                              \
            failures++;                                         \
        }                                                       \
    } while (0)

/* Feeds `frames` frames of two channels, in 256-frame blocks, as the host would. */
static void feed(const jackhost_plugin_descriptor_t *plugin, void *instance, const float *left, const float *right,
                 uint32_t frames) {
    uint64_t sequence = 0;
    for (uint32_t offset = 0; offset < frames; offset += 256, sequence++) {
        const float *channels[2] = {left + offset, right + offset};
        jackhost_plugin_block_t block = {
            .struct_size = sizeof block, .channel_count = 2, .channels = channels,
            .frame_count = frames - offset < 256 ? frames - offset : 256, .frame_time = offset,
            .sequence = sequence,
        };
        plugin->process(instance, &block);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s libCPeak.so\n", argv[0]);
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "FAIL dlopen: %s\n", dlerror());
        return 1;
    }
    jackhost_plugin_entry_t entry = (jackhost_plugin_entry_t)dlsym(library, JACKHOST_PLUGIN_ENTRY_SYMBOL);
    CHECK(entry != NULL, "no entry symbol");
    if (entry == NULL) return 1;
    const jackhost_plugin_descriptor_t *plugin = entry();
    CHECK(plugin->abi_version == JACKHOST_PLUGIN_ABI_VERSION, "abi %u", plugin->abi_version);
    CHECK(plugin->struct_size == sizeof *plugin, "struct_size %u", plugin->struct_size);
    CHECK(strcmp(plugin->name, "CPeak") == 0, "name %s", plugin->name);
    CHECK(plugin->mode == JACKHOST_PLUGIN_MODE_REALTIME, "mode %u", plugin->mode);
    CHECK(plugin->option_count == 2, "options %u", plugin->option_count);
    CHECK(dlsym(library, "cpeak_process") == NULL, "only the entry symbol may be exported");

    char path[] = "/tmp/cpeak-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0, "mkstemp");
    char error[JACKHOST_PLUGIN_ERROR_CAPACITY] = "";

    /* A stream with more channels than max-channels is refused with a reason. */
    jackhost_plugin_key_value_t strict[] = {{"max-channels", "1"}, {"output", path}};
    void *refusing = plugin->create(plugin, strict, 2, error, sizeof error);
    CHECK(refusing != NULL, "create: %s", error);
    jackhost_plugin_format_t format = {.struct_size = sizeof format, .channel_count = 2, .sample_rate = 48000};
    CHECK(plugin->prepare(refusing, &format, error, sizeof error) != 0, "prepare accepted 2 channels with max-channels=1");
    CHECK(strstr(error, "max-channels=1") != NULL, "reason names the option: %s", error);
    plugin->destroy(refusing);

    /* An unwritable output fails create with a reason. */
    jackhost_plugin_key_value_t unwritable[] = {{"output", "/nonexistent-dir/x.txt"}, {"max-channels", "64"}};
    error[0] = '\0';
    CHECK(plugin->create(plugin, unwritable, 2, error, sizeof error) == NULL, "create accepted an unwritable path");
    CHECK(strstr(error, "/nonexistent-dir/x.txt") != NULL, "reason names the path: %s", error);

    /* Half-scale sine on the left, a ramp that clips 10 samples on the right. */
    enum { frames = 4800 };
    static float left[frames], right[frames];
    for (int i = 0; i < frames; i++) {
        left[i] = 0.5f * (float)sin(2 * M_PI * 1000 * i / 48000.0);
        right[i] = i >= frames - 10 ? -1.0f : 0.25f * (float)i / frames;
    }
    jackhost_plugin_key_value_t options[] = {{"output", path}, {"max-channels", "64"}};
    void *instance = plugin->create(plugin, options, 2, error, sizeof error);
    CHECK(instance != NULL, "create: %s", error);
    CHECK(plugin->prepare(instance, &format, error, sizeof error) == 0, "prepare: %s", error);
    feed(plugin, instance, left, right, frames);
    plugin->finish(instance);
    plugin->destroy(instance);

    FILE *result = fopen(path, "r");
    char line1[256] = "", line2[256] = "";
    CHECK(result != NULL && fgets(line1, sizeof line1, result) && fgets(line2, sizeof line2, result), "two lines");
    if (result) fclose(result);
    CHECK(strcmp(line1, "peak in_1 0.500000 -6.02 dBFS clips 0\n") == 0, "line 1: %s", line1);
    CHECK(strcmp(line2, "peak in_2 1.000000 0.00 dBFS clips 10\n") == 0, "line 2: %s", line2);
    unlink(path);

    if (failures) {
        fprintf(stderr, "test_cpeak: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_cpeak: all checks passed\n");
    return 0;
}
