/*
 * CPeak: a JackHost plugin written in C against jackhost_plugin.h alone.
 *
 * Real-time mode. process() keeps the largest absolute sample and the number
 * of clipped samples (|x| >= 1) per channel; finish() writes one line per
 * channel, to stdout or to the file given as output=PATH:
 *
 *     peak in_1 0.500000 -6.02 dBFS clips 0
 *
 * Options: output (string), max-channels (int, default 64; prepare refuses a
 * stream with more channels, which shows how a plugin rejects a format).
 */
#include <jackhost_plugin.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One instance. Everything process() touches is allocated in prepare(). */
typedef struct {
    FILE *output;          /* stdout, or the file from output=PATH (opened in create) */
    int owns_output;       /* whether destroy() closes `output` */
    long long max_channels;
    uint32_t channel_count;
    float *peaks;          /* channel_count entries */
    uint64_t *clips;       /* channel_count entries */
} cpeak_t;

static void *cpeak_create(const jackhost_plugin_descriptor_t *descriptor,
                          const jackhost_plugin_key_value_t *pairs, uint32_t pair_count,
                          char *error, size_t error_capacity) {
    (void)descriptor;
    cpeak_t *self = calloc(1, sizeof *self);
    if (self == NULL) {
        jackhost_plugin_set_error(error, error_capacity, "out of memory");
        return NULL;
    }
    /* The host fills in defaults and has checked that max-channels is an integer. */
    const char *max = jackhost_plugin_find_option(pairs, pair_count, "max-channels");
    self->max_channels = max != NULL ? strtoll(max, NULL, 10) : 64;
    if (self->max_channels < 1) {
        jackhost_plugin_set_error(error, error_capacity, "max-channels must be at least 1");
        free(self);
        return NULL;
    }
    const char *path = jackhost_plugin_find_option(pairs, pair_count, "output");
    if (path != NULL) {
        /* Opened here, not in finish(), so a bad path stops jackhost before it touches JACK. */
        self->output = fopen(path, "w");
        if (self->output == NULL) {
            char message[JACKHOST_PLUGIN_ERROR_CAPACITY];
            snprintf(message, sizeof message, "cannot open output %s: %s", path, strerror(errno));
            jackhost_plugin_set_error(error, error_capacity, message);
            free(self);
            return NULL;
        }
        self->owns_output = 1;
    } else {
        self->output = stdout;
    }
    return self;
}

static int32_t cpeak_prepare(void *instance, const jackhost_plugin_format_t *format,
                             char *error, size_t error_capacity) {
    cpeak_t *self = instance;
    if ((long long)format->channel_count > self->max_channels) {
        char message[256];
        snprintf(message, sizeof message, "CPeak is limited to %lld channels (max-channels=%lld) but the stream has %u",
                 self->max_channels, self->max_channels, format->channel_count);
        jackhost_plugin_set_error(error, error_capacity, message);
        return 1;
    }
    /* A second prepare (after a reconnect) gets fresh, zeroed arrays. calloc also faults the pages in. */
    free(self->peaks);
    free(self->clips);
    self->peaks = calloc(format->channel_count, sizeof *self->peaks);
    self->clips = calloc(format->channel_count, sizeof *self->clips);
    if (self->peaks == NULL || self->clips == NULL) {
        jackhost_plugin_set_error(error, error_capacity, "out of memory");
        return 1;
    }
    self->channel_count = format->channel_count;
    return 0;
}

/* REAL-TIME: runs in JACK's process callback. Arithmetic on preallocated memory only. */
static void cpeak_process(void *instance, const jackhost_plugin_block_t *block) {
    cpeak_t *self = instance;
    uint32_t channels = block->channel_count < self->channel_count ? block->channel_count : self->channel_count;
    for (uint32_t c = 0; c < channels; c++) {
        const float *samples = block->channels[c];
        float peak = self->peaks[c];
        uint64_t clips = 0;
        for (uint32_t i = 0; i < block->frame_count; i++) {
            float magnitude = fabsf(samples[i]);
            if (magnitude > peak) peak = magnitude;
            if (magnitude >= 1.0f) clips++;
        }
        self->peaks[c] = peak;
        self->clips[c] += clips;
    }
}

static void cpeak_finish(void *instance) {
    cpeak_t *self = instance;
    for (uint32_t c = 0; c < self->channel_count; c++) {
        float peak = self->peaks[c];
        if (peak > 0) {
            fprintf(self->output, "peak in_%u %.6f %.2f dBFS clips %llu\n", c + 1, peak, 20.0 * log10(peak),
                    (unsigned long long)self->clips[c]);
        } else {
            fprintf(self->output, "peak in_%u 0.000000 -inf dBFS clips %llu\n", c + 1, (unsigned long long)self->clips[c]);
        }
    }
    fflush(self->output);
}

static void cpeak_destroy(void *instance) {
    cpeak_t *self = instance;
    if (self->owns_output) fclose(self->output);
    free(self->peaks);
    free(self->clips);
    free(self);
}

static const jackhost_plugin_option_t cpeak_options[] = {
    {.name = "output", .type = JACKHOST_PLUGIN_OPTION_STRING, .default_value = NULL,
     .help = "write the results to PATH instead of stdout"},
    {.name = "max-channels", .type = JACKHOST_PLUGIN_OPTION_INT, .default_value = "64",
     .help = "refuse streams with more channels than this"},
};

static const jackhost_plugin_descriptor_t cpeak_descriptor = {
    .abi_version = JACKHOST_PLUGIN_ABI_VERSION,
    .struct_size = sizeof(jackhost_plugin_descriptor_t),
    .name = "CPeak",
    .version = "1.0.0",
    .mode = JACKHOST_PLUGIN_MODE_REALTIME,
    .option_count = sizeof cpeak_options / sizeof cpeak_options[0],
    .options = cpeak_options,
    .plugin_data = NULL,
    .create = cpeak_create,
    .prepare = cpeak_prepare,
    .process = cpeak_process,
    .finish = cpeak_finish,
    .destroy = cpeak_destroy,
};

const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void) { return &cpeak_descriptor; }
