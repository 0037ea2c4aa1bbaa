#!/usr/bin/env python3
"""Lists, and optionally clears, stale server slots in jack2's shared-memory registry.

jack2 keeps at most 8 servers in /dev/shm/jack-shm-registry. A jackd that dies without
unregistering (SIGKILL, a crash) leaves its slot behind, and jack2 only reclaims a slot for a
server of the same name, so after 8 such leaks every new jackd on the machine fails with
"Too many servers already active". scripts/bench starts many short-lived servers, so it
clears the slots of *its own* servers (by name prefix) whose process is gone, at exit.

Layout (jack2 common/shm.h): a header of magic u32, protocol u16 (+2 pad), type i32, size i32,
hdr_len i32, entry_len i32, then 8 slots of {pid_t pid; char name[257]} padded to 264 bytes.

Usage: jack_registry.py [--clear-dead PREFIX]   (PREFIX matches the server name, e.g. jhbench-123-)
"""
import os
import struct
import sys

REGISTRY = "/dev/shm/jack-shm-registry"
MAGIC = 0x4A41434B  # "JACK"
FIRST_SLOT, SLOT_SIZE, SLOTS = 24, 264, 8


def slots(data):
    for index in range(SLOTS):
        offset = FIRST_SLOT + index * SLOT_SIZE
        pid = struct.unpack_from("<i", data, offset)[0]
        raw = data[offset + 4:offset + 4 + 257]
        # jack2 stores "jack-UID:SERVER:".
        name = raw.split(b"\0")[0].decode(errors="replace")
        yield index, offset, pid, name


def alive(pid):
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def main():
    clear_prefix = None
    if len(sys.argv) == 3 and sys.argv[1] == "--clear-dead":
        clear_prefix = sys.argv[2]
    elif len(sys.argv) != 1:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        with open(REGISTRY, "r+b") as registry:
            data = bytearray(registry.read(FIRST_SLOT + SLOTS * SLOT_SIZE))
            if len(data) < FIRST_SLOT + SLOTS * SLOT_SIZE or struct.unpack_from("<I", data, 0)[0] != MAGIC:
                print("jack_registry: not a jack2 registry; leaving it alone", file=sys.stderr)
                return 1
            changed = False
            used = 0
            for index, offset, pid, name in slots(data):
                if pid == 0:
                    continue
                state = "alive" if alive(pid) else "dead"
                used += 1
                parts = name.split(":")
                server = parts[1] if len(parts) > 1 else name
                if clear_prefix is not None and state == "dead" and server.startswith(clear_prefix):
                    data[offset:offset + SLOT_SIZE] = bytes(SLOT_SIZE)
                    changed = True
                    state = "dead, cleared"
                    used -= 1
                if clear_prefix is None:
                    print(f"slot {index}: pid {pid} ({state}) {name}")
            if changed:
                registry.seek(0)
                registry.write(data)
            if clear_prefix is None:
                print(f"{used} of {SLOTS} server slots in use")
    except FileNotFoundError:
        if clear_prefix is None:
            print("no registry (no jack2 server has run)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
