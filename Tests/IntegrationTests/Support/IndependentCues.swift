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

    /// The cue points of a WAV or RF64 file with their `labl` names, read by Python's struct
    /// module walking the chunks (the RIFF size must cover them).
    static func read(_ file: String) throws -> [Cue] {
        let script = #"""
            import struct, sys
            data = open(sys.argv[1], "rb").read()
            form, size, wave = struct.unpack("<4sI4s", data[:12])
            assert wave == b"WAVE", "not WAVE"
            if form == b"RF64":
                size = struct.unpack("<Q", data[20:28])[0]
                data_size = struct.unpack("<Q", data[28:36])[0]
            assert size == len(data) - 8, "RIFF size %d for a file of %d bytes" % (size, len(data))
            offset, points, labels = 12, [], {}
            while offset + 8 <= len(data):
                name, length = struct.unpack("<4sI", data[offset:offset + 8])
                if name == b"data" and form == b"RF64": length = data_size
                body = data[offset + 8:offset + 8 + length]
                if name == b"cue ":
                    count = struct.unpack("<I", body[:4])[0]
                    for i in range(count):
                        ident, _, chunk, _, _, sample = struct.unpack("<II4sIII", body[4 + 24 * i:28 + 24 * i])
                        assert chunk == b"data"
                        points.append((ident, sample))
                if name == b"LIST" and body[:4] == b"adtl":
                    sub = 4
                    while sub + 8 <= len(body):
                        kind, sublen = struct.unpack("<4sI", body[sub:sub + 8])
                        if kind == b"labl":
                            ident = struct.unpack("<I", body[sub + 8:sub + 12])[0]
                            labels[ident] = body[sub + 12:sub + 8 + sublen].split(b"\0")[0].decode()
                        sub += 8 + sublen + (sublen & 1)
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
