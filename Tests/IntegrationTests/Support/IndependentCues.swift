import Foundation
import JackHostTesting
import XCTest

/// The markers of a take as an independent reader finds them: a RIFF walker in Python, not
/// libsndfile and not jackhost's code.
enum IndependentCues {
    struct Cue: Equatable {
        var frame: Int
        var label: String
    }

    /// The cue points of a WAV, RF64 or W64 file with their `labl` names, read by Python's struct
    /// module walking the chunks (the RIFF size must cover them; in W64 the chunks are named by
    /// GUIDs, and `cue ` and `list`/`adtl` hold what they hold in WAV).
    static func read(_ file: String) throws -> [Cue] {
        let script = #"""
            import struct, sys
            data = open(sys.argv[1], "rb").read()
            points, labels = [], {}
            def cue(body):
                count = struct.unpack("<I", body[:4])[0]
                for i in range(count):
                    ident, _, chunk, _, _, sample = struct.unpack("<II4sIII", body[4 + 24 * i:28 + 24 * i])
                    assert chunk == b"data"
                    points.append((ident, sample))
            def adtl(body):
                sub = 4
                while sub + 8 <= len(body):
                    kind, sublen = struct.unpack("<4sI", body[sub:sub + 8])
                    if kind == b"labl":
                        ident = struct.unpack("<I", body[sub + 8:sub + 12])[0]
                        labels[ident] = body[sub + 12:sub + 8 + sublen].split(b"\0")[0].decode()
                    sub += 8 + sublen + (sublen & 1)
            if data[:4] == b"riff":
                # Sony Wave64: 16-byte GUID names (RIFF names as GUIDs), 64-bit sizes that count
                # the 24-byte header, chunks 8-byte aligned; markers before the audio.
                suffix = bytes.fromhex("f3acd3118cd100c04f8edb8a")
                assert data[4:16] == bytes.fromhex("2e91cf11a5d628db04c10000"), "not a W64 riff GUID"
                assert struct.unpack("<Q", data[16:24])[0] == len(data), "riff size is not the file's"
                assert data[24:40] == b"wave" + suffix, "not W64 wave"
                offset = 40
                while offset + 24 <= len(data):
                    guid, length = data[offset:offset + 16], struct.unpack("<Q", data[offset + 16:offset + 24])[0]
                    body = data[offset + 24:offset + length]
                    if guid == b"cue " + suffix: cue(body)
                    if guid == b"list" + bytes.fromhex("2f91cf11a5d628db04c10000") and body[:4] == b"adtl": adtl(body)
                    offset += length + (8 - length % 8) % 8
            else:
                form, size, wave = struct.unpack("<4sI4s", data[:12])
                assert wave == b"WAVE", "not WAVE"
                if form == b"RF64":
                    size = struct.unpack("<Q", data[20:28])[0]
                    data_size = struct.unpack("<Q", data[28:36])[0]
                assert size == len(data) - 8, "RIFF size %d for a file of %d bytes" % (size, len(data))
                offset = 12
                while offset + 8 <= len(data):
                    name, length = struct.unpack("<4sI", data[offset:offset + 8])
                    if name == b"data" and form == b"RF64": length = data_size
                    body = data[offset + 8:offset + 8 + length]
                    if name == b"cue ": cue(body)
                    if name == b"LIST" and body[:4] == b"adtl": adtl(body)
                    offset += 8 + length + (length & 1)
            for ident, sample in points: print("%d\t%s" % (sample, labels.get(ident, "")))
            """#
        let result = try JACKFixture.run("/usr/bin/python3", ["-c", script, file], timeout: 20)
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.split(separator: "\n").map { line in
            let parts = line.split(separator: "\t", maxSplits: 1)
            return Cue(frame: Int(parts[0]) ?? -1, label: parts.count > 1 ? String(parts[1]) : "")
        }
    }
}
