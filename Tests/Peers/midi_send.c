/*
 * midi_send: a minimal JACK MIDI client for jackhost's tests, the independent sender of MIDI
 * Machine Control and notes. It registers one MIDI output, connects it to TARGET, and sends
 * each EVENT in turn: after DELAY milliseconds, in the next cycle, at frame OFFSET of that cycle.
 * For each event sent it prints "frame F" on stdout: the event's JACK frame time (the cycle's
 * first frame, jack_last_frame_time, plus OFFSET). Exits 0 once every event was sent.
 *
 * Usage: midi_send SERVER TARGET DELAY:OFFSET:HEXBYTES...
 *   e.g. midi_send srv jackhost:control 500:17:f07f7f0606f7 800:5:903c64 600:40:f07f7f0601f7
 *
 * Real-time rules: the process callback only reads atomics, writes the event and stores its
 * frame; no allocation, lock or system call.
 */
#include <jack/jack.h>
#include <jack/midiport.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jack_client_t *client;
static jack_port_t *output;
static unsigned char pending[64];
static size_t pending_size;
static jack_nframes_t pending_offset;
static atomic_int armed;          /* 1: the callback sends `pending` in its next cycle */
static atomic_uint sent_frame;    /* the frame time of the event sent */
static atomic_int sent;           /* 1 once it was sent */

static int process(jack_nframes_t frames, void *arg) {
    (void)arg;
    void *buffer = jack_port_get_buffer(output, frames);
    jack_midi_clear_buffer(buffer);
    if (atomic_load(&armed) && pending_offset < frames) {
        if (jack_midi_event_write(buffer, pending_offset, pending, pending_size) == 0) {
            atomic_store(&sent_frame, jack_last_frame_time(client) + pending_offset);
            atomic_store(&armed, 0);
            atomic_store(&sent, 1);
        }
    }
    return 0;
}

static size_t parse_hex(const char *text, unsigned char *bytes, size_t capacity) {
    size_t count = 0;
    while (text[0] && text[1] && count < capacity) {
        unsigned value;
        if (sscanf(text, "%2x", &value) != 1) break;
        bytes[count++] = (unsigned char)value;
        text += 2;
    }
    return count;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: midi_send SERVER TARGET DELAY:OFFSET:HEXBYTES...\n");
        return 2;
    }
    jack_status_t status;
    client = jack_client_open("jhmidisend", JackServerName | JackNoStartServer, &status, argv[1]);
    if (!client) {
        fprintf(stderr, "midi_send: cannot open a client on %s (status 0x%x)\n", argv[1], status);
        return 1;
    }
    output = jack_port_register(client, "out", JACK_DEFAULT_MIDI_TYPE, JackPortIsOutput, 0);
    jack_set_process_callback(client, process, NULL);
    if (!output || jack_activate(client) != 0) return 1;
    if (jack_connect(client, jack_port_name(output), argv[2]) != 0) {
        fprintf(stderr, "midi_send: cannot connect to %s\n", argv[2]);
        return 1;
    }
    for (int index = 3; index < argc; index++) {
        unsigned delay = 0, offset = 0;
        char hex[129] = {0};
        if (sscanf(argv[index], "%u:%u:%128s", &delay, &offset, hex) != 3) {
            fprintf(stderr, "midi_send: bad event %s\n", argv[index]);
            return 2;
        }
        usleep(delay * 1000);
        pending_size = parse_hex(hex, pending, sizeof pending);
        pending_offset = offset;
        atomic_store(&sent, 0);
        atomic_store(&armed, 1);
        while (!atomic_load(&sent)) usleep(1000);
        printf("frame %u\n", atomic_load(&sent_frame));
        fflush(stdout);
    }
    jack_deactivate(client);
    jack_client_close(client);
    return 0;
}
