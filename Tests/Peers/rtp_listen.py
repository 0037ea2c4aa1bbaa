#!/usr/bin/env python3
"""An independent RTP receiver for the AES67 tests: joins a multicast group, reads L24 or L16
packets for a while and prints one JSON object with what it saw on the wire.

It shares nothing with PipeWire, so it tells what the sender put on the network from what the
receiving PipeWire made of it: packets, sequence-number gaps (lost packets), timestamp breaks,
frames per packet, payload types, and, for jackhost's test sequence, whether every sample is an
exact 16-bit value of the sequence and the sequence goes on frame by frame.

usage: rtp_listen.py GROUP PORT SECONDS [--bytes 3|2] [--channels N]
"""
import argparse
import json
import socket
import struct
import time


def sequence_frame(k0, k1):
    """The frame number from channels 0 and 1 of jackhost's sequence (TestSignal.sequenceValue)."""
    low = ((k0 - 1) * 31711) & 0xFFFF  # 31 * 31711 = 1 (mod 65536)
    high = (k1 - (low * 31 + 7919 + 1)) & 0xFFFF
    return high << 16 | low


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("group")
    parser.add_argument("port", type=int)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--bytes", type=int, default=3, choices=[2, 3])
    parser.add_argument("--channels", type=int, default=2)
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_UDP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.group, args.port))
    membership = socket.inet_aton(args.group) + socket.inet_aton("0.0.0.0")
    sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
    sock.settimeout(0.5)

    width = args.bytes * args.channels
    seen = {"packets": 0, "lostPackets": 0, "timestampBreaks": 0, "framesPerPacket": [], "payloadTypes": [],
            "frames": 0, "samplesNot16Bit": 0, "sequenceBreaks": 0, "silentFrames": 0}
    last_seq = last_ts = last_frames = previous = None
    end = time.monotonic() + args.seconds
    while time.monotonic() < end:
        try:
            packet = sock.recv(4096)
        except socket.timeout:
            continue
        seq, stamp = struct.unpack("!HI", packet[2:8])
        payload = packet[12 + 4 * (packet[0] & 0x0F):]
        frames = len(payload) // width
        seen["packets"] += 1
        if packet[1] & 0x7F not in seen["payloadTypes"]:
            seen["payloadTypes"].append(packet[1] & 0x7F)
        if frames not in seen["framesPerPacket"]:
            seen["framesPerPacket"].append(frames)
        if last_seq is not None:
            seen["lostPackets"] += (seq - last_seq - 1) & 0xFFFF
            if stamp != (last_ts + last_frames) & 0xFFFFFFFF:
                seen["timestampBreaks"] += 1
        last_seq, last_ts, last_frames = seq, stamp, frames
        for i in range(frames):
            frame = payload[i * width:(i + 1) * width]
            samples = [int.from_bytes(frame[c * args.bytes:(c + 1) * args.bytes], "big", signed=True)
                       for c in range(args.channels)]
            seen["frames"] += 1
            if all(s == 0 for s in samples):
                seen["silentFrames"] += 1
                previous = None
                continue
            shift = 8 * (args.bytes - 2)
            if any(s & ((1 << shift) - 1) for s in samples):
                seen["samplesNot16Bit"] += 1
                previous = None
                continue
            if args.channels >= 2:
                number = sequence_frame((samples[0] >> shift) & 0xFFFF, (samples[1] >> shift) & 0xFFFF)
                if previous is not None and number != (previous + 1) & 0xFFFFFFFF:
                    seen["sequenceBreaks"] += 1
                previous = number
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
