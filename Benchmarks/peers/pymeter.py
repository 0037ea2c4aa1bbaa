#!/usr/bin/env python3
"""pymeter: the Python peer of `jackhost run --meter`, on PyPI's JACK-Client and numpy.

It does what Benchmarks/peers/cmeter.c does: registers N inputs (in_1 ... in_N), connects
system:capture_i to in_i after activation, scans every buffer for its peak each cycle,
processes exactly --frames frames (the last cycle cut to the frame) and exits. Python
cannot keep allocation out of its callback (every numpy call allocates), so it is a
reference point for "the easy way", not a real-time-safe client.

With CYCLE_CLOCK_OUT set it timestamps each callback's entry and writes at exit what
Benchmarks/peers/cycle_clock_shim.c writes for C clients (which it cannot do here: cffi opens
libjack with dlopen, past LD_PRELOAD), the same summary of intervals between cycles.
SIGTERM and SIGINT end it like the frame limit does.

Output at exit: "pymeter cycles=N frames=F channels=C peak=P", and with --callback-time
"callback_us count=N p50=.. p99=.. max=.." on stderr, in microseconds of the monotonic clock
(the same clock jack_get_time reads on Linux, which JACK-Client does not expose).
"""
import argparse
import os
import signal
import sys
import threading
import time

import jack
import numpy as np


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-s", "--server", required=True)
    parser.add_argument("-n", "--name", default="pymeter")
    parser.add_argument("-c", "--channels", type=int, required=True)
    parser.add_argument("--frames", type=int, default=-1)
    parser.add_argument("--callback-time", action="store_true")
    args = parser.parse_args()

    client = jack.Client(args.name, servername=args.server, no_start_server=True)
    ports = [client.inports.register(f"in_{i + 1}") for i in range(args.channels)]
    peaks = np.zeros(args.channels, dtype=np.float32)
    state = {"delivered": 0, "cycles": 0}
    limit = args.frames
    done = threading.Event()
    durations = np.zeros(20000, dtype=np.int64) if args.callback_time else None
    maximum = [0]
    clock_out = os.environ.get("CYCLE_CLOCK_OUT")
    entries = np.zeros(1 << 20, dtype=np.int64) if clock_out else None   # preallocated, like the shim's
    entry_count = [0]

    def get_time():
        return time.monotonic_ns() // 1000

    @client.set_process_callback
    def process(frames):
        if entries is not None and entry_count[0] < len(entries):
            entries[entry_count[0]] = time.monotonic_ns()
            entry_count[0] += 1
        began = get_time() if durations is not None else 0
        deliverable = frames if limit < 0 else min(frames, limit - state["delivered"])
        if deliverable > 0:
            for index, port in enumerate(ports):
                peak = np.abs(port.get_array()[:deliverable]).max()
                if peak > peaks[index]:
                    peaks[index] = peak
            state["delivered"] += deliverable
            if 0 <= limit <= state["delivered"]:
                done.set()
        state["cycles"] += 1
        if durations is not None:
            elapsed = get_time() - began
            durations[min(elapsed, len(durations) - 1)] += 1
            maximum[0] = max(maximum[0], elapsed)

    client.set_shutdown_callback(lambda status, reason: done.set())
    signal.signal(signal.SIGTERM, lambda number, frame: done.set())
    client.activate()
    for index, port in enumerate(ports):
        try:
            client.connect(f"system:capture_{index + 1}", port)
        except jack.JackError as error:
            print(f"pymeter: warning: {error}", file=sys.stderr)
    try:
        while not done.wait(0.001):
            pass
    except KeyboardInterrupt:
        pass
    client.deactivate()
    print(f"pymeter cycles={state['cycles']} frames={state['delivered']} channels={args.channels} peak={peaks.max()}")
    if durations is not None:
        count = int(durations.sum())
        cumulative = np.cumsum(durations)

        def percentile(p):
            return int(np.searchsorted(cumulative, int(np.ceil(count * p)))) if count else 0

        period = 1e6 * client.blocksize / client.samplerate
        print(f"callback_us count={count} p50={percentile(0.5)} p99={percentile(0.99)} max={maximum[0]} period_us={period:.0f}",
              file=sys.stderr)
    client.close()
    if entries is not None and entry_count[0] > 1:
        write_cycle_clock(clock_out, entries[:entry_count[0]])
    return 0


def write_cycle_clock(path, entries):
    """The summary cycle_clock_shim.c writes: intervals under 1 ms are freewheel cycles."""
    intervals = np.diff(entries).astype(np.float64)
    fast = np.sort(intervals[intervals < 1e6])
    slow = intervals[intervals >= 1e6]
    with open(path, "w") as out:
        if len(fast) == 0:
            out.write(f"cycles={len(entries)} fast=0\n")
            return
        out.write(f"cycles={len(entries)} fast={len(fast)} median_ns={fast[len(fast) // 2]:.0f} "
                  f"p10_ns={fast[len(fast) // 10]:.0f} p90_ns={fast[len(fast) * 9 // 10]:.0f} "
                  f"mean_ns={fast.mean():.0f} slow_total_ns={slow.sum():.0f}\n")


if __name__ == "__main__":
    sys.exit(main())
