import Foundation
import JackHostConsumers
import JackHostTesting
import Synchronization
import XCTest

@testable import JackHost

/// The durability policy and the disk's limits: data and header reach stable storage every
/// `--sync-interval` seconds of audio, the remaining recording time is announced, `--min-free`
/// ends a take cleanly before the disk is full, and a disk that fills up mid-take (or /dev/full)
/// stops only the recorder.
final class StorageTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-durable-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// Logs every fdatasync(2) with the path of its descriptor, then calls the real one.
    static let syncLogSource = """
        #define _GNU_SOURCE
        #include <dlfcn.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        int fdatasync(int fd) {
            static int (*real)(int);
            if (real == NULL) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
            const char *log = getenv("SYNC_LOG");
            if (log != NULL) {
                char link[64], target[4096];
                snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
                ssize_t length = readlink(link, target, sizeof target - 1);
                FILE *out = fopen(log, "a");
                if (out != NULL) {
                    fprintf(out, "%s\\n", length > 0 ? (target[length] = 0, target) : "?");
                    fclose(out);
                }
            }
            return real(fd);
        }
        """

    func testDataReachesStableStorageAtTheSyncInterval() throws {
        let source = workDirectory.appendingPathComponent("synclog.c").path
        try Self.syncLogSource.write(toFile: source, atomically: true, encoding: .utf8)
        let shim = workDirectory.appendingPathComponent("libsynclog.so").path
        XCTAssertEqual(try JACKFixture.run("cc", ["-shared", "-fPIC", source, "-o", shim, "-ldl"]).status, 0)
        try JACKFixture.withServer(captureChannels: 2) { server in
            for (interval, expected) in [("0.5", 5...7), ("0", 0...0)] {
                let log = workDirectory.appendingPathComponent("sync-\(interval).log").path
                let take = workDirectory.appendingPathComponent("durable-\(interval).wav").path
                let result = try JACKFixture.run(
                    JackhostBinary.path, ["record", take, "-s", server.name, "-d", "3", "--sync-interval", interval, "-q"],
                    environment: ["LD_PRELOAD": shim, "SYNC_LOG": log])
                XCTAssertEqual(result.status, 0, result.stderr)
                let syncs = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.hasSuffix(".wav") }
                XCTAssertTrue(expected.contains(syncs.count), "--sync-interval \(interval): \(syncs.count) fdatasync calls on the take")
                XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(take)?.frames, 144_000)
                reliabilityFigures("durability, --sync-interval \(interval) over a 3 s take", "\(syncs.count) fdatasync calls on the take's file")
            }
        }
    }

    /// A 3 MiB disk: the remaining time is announced at once, and `--min-free 2M` ends the take
    /// with a valid file before the disk has less than 2 MiB free.
    func testMinFreeEndsTheTakeBeforeTheDiskIsFull() throws {
        let mountPoint = workDirectory.appendingPathComponent("small").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try JACKFixture.run("mount", ["-t", "tmpfs", "-o", "size=3m", "tmpfs", mountPoint])
        guard mount.status == 0 else {
            print("SKIPPED LOUDLY: cannot mount a 3 MiB tmpfs here (needs root): \(mount.stderr)")
            throw XCTSkip("cannot mount a tmpfs: \(mount.stderr)")
        }
        defer { _ = try? JACKFixture.run("umount", [mountPoint]) }
        try JACKFixture.withServer(captureChannels: 2) { server in
            let take = mountPoint + "/reserved.wav"
            let result = try JackhostBinary.run(["record", take, "-s", server.name, "-d", "5", "--min-free", "2M", "--meter"])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("minutes of recording space left"), result.stderr)
            XCTAssertTrue(result.stdout.contains("DISK: "), "the meter shows the time left too: \(result.stdout)")
            XCTAssertTrue(result.stderr.contains("would be left free on its disk (--min-free)"), result.stderr)
            XCTAssertFalse(result.stderr.contains("no space left"), "the disk never filled: \(result.stderr)")
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take), "the take is valid")
            XCTAssertGreaterThan(header.frames, 48_000)
            let free =
                try JACKFixture.run("df", ["-B1", "--output=avail", mountPoint]).stdout
                .split(separator: "\n").last.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
            XCTAssertGreaterThan(free, 1 << 20, "the reserve is kept, within half a second of audio")
            reliabilityFigures(
                "--min-free 2M on a 3 MiB disk",
                "exit 1; valid take of \(header.frames) frames; \(free) bytes still free; the remaining time was announced")
        }
    }

    /// A disk that fills up mid-take: the recorder stops with the OS error, the file stays valid
    /// with every frame written before the failure, the meter runs on, exit status 1.
    func testDiskFillingUpMidTake() throws {
        let mountPoint = workDirectory.appendingPathComponent("tiny").path
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mount = try JACKFixture.run("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint])
        guard mount.status == 0 else {
            print("SKIPPED LOUDLY: cannot mount a 1 MiB tmpfs here (needs root): \(mount.stderr)")
            throw XCTSkip("cannot mount a tmpfs: \(mount.stderr)")
        }
        defer { _ = try? JACKFixture.run("umount", [mountPoint]) }
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let path = mountPoint + "/full.wav"
            let result = try JackhostBinary.run([
                "run", "--record", path, "--meter", "-s", server.name,
                "--connect", "jhgen:out_.*", "-d", "5",
            ])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("no space left on device"), result.stderr)
            XCTAssertFalse(result.stderr.contains("System error"), "libsndfile's raw text stays out: \(result.stderr)")
            XCTAssertTrue(result.stdout.contains("channel  peak_dBFS"), "the meter ran to the end")
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(path), "the partial take is readable")
            let reported = result.stdout.components(separatedBy: "recorded ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) }
            XCTAssertEqual(reported, header.frames, "header and report agree")
            XCTAssertGreaterThan(header.frames, 100_000, "about 1 MiB of float stereo")
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(path, channels: 2)).firstMismatch)
            reliabilityFigures(
                "1 MiB tmpfs fills mid-take",
                "exit 1; file readable with \(header.frames) frames = reported; bit-exact up to the failure; meter ran the full 5 s")
        }
    }

    /// A full disk stops the recorder with the OS error; the meter keeps running; exit status 1.
    func testFullDiskStopsOnlyTheRecorder() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let result = try JackhostBinary.run(["run", "--record", "/dev/full", "-f", "wav", "--meter", "-s", server.name, "-d", "1"])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("no space left on device"), result.stderr)
            XCTAssertFalse(result.stderr.contains("System error"), "libsndfile's raw text stays out: \(result.stderr)")
            XCTAssertTrue(result.stdout.contains("channel  peak_dBFS"), "the meter ran to the end: \(result.stdout)")
            reliabilityFigures(
                "record to /dev/full",
                "exit 1; \(result.stderr.split(separator: "\n").first { $0.contains("no space") } ?? ""); meter summary printed")
        }
    }
}
