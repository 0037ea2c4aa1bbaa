import Foundation
import JackHost
import JackHostTesting
import XCTest

/// A take you can trust: audio is real or jackhost fails, takes are never overwritten, closed
/// descriptors never reach the server, and every waiting state ends within a second of a
/// signal with the files finalised.
final class TrustworthyTakeTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// Waits for exit and returns the status and the seconds since `since`.
    private func exit(
        of child: RunningJackhost, since: Date, limit: Double = 5,
        file: StaticString = #filePath, line: UInt = #line
    ) -> (status: Int32, seconds: Double) {
        let status = child.wait(timeout: limit, file: file, line: line)
        return (status, Date().timeIntervalSince(since))
    }

    // MARK: Audio is real, or jackhost fails

    /// With no server, no command starts one behind the user's back: exit 1, one line that says
    /// how to start a server, and no file. Before, record/meter/stream/run recorded test tones
    /// from a private server and exited 0.
    func testNoServerFailsLoudlyInsteadOfRecordingTestTones() throws {
        try JACKFixture.serialized {
            guard !PrivateJACKServer.isRunning(nil) else { throw XCTSkip("a default JACK server runs on this machine") }
            let take = path("take.wav")
            for arguments in [
                ["record", take, "-d", "1"], ["meter", "-d", "1"], ["stream", "-d", "1"], ["run", "--meter", "-d", "1"],
                ["record", "-d", "1"],
            ] {
                let result = try JACKFixture.run(
                    JackhostBinary.path, arguments, timeout: 20, directory: workDirectory,
                    removingEnvironment: ["JACK_DEFAULT_SERVER"])
                let label = arguments.joined(separator: " ")
                XCTAssertEqual(result.status, 1, "\(label): \(result.stderr)")
                XCTAssertEqual(result.stderr.split(separator: "\n").count, 1, "\(label): \(result.stderr)")
                XCTAssertTrue(result.stderr.contains("no JACK server is running"), result.stderr)
                XCTAssertTrue(result.stderr.contains("pw-jack") && result.stderr.contains("qjackctl"), result.stderr)
                XCTAssertFalse(result.stderr.contains("private dummy"), result.stderr)
            }
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: workDirectory.path), [], "no take of fake audio")
            // A studio server named by JACK_DEFAULT_SERVER that has crashed: the same, naming it.
            let crashed = "jhtest-crashed-\(getpid())"
            let result = try JACKFixture.run(
                JackhostBinary.path, ["record", take, "-d", "1"], timeout: 20,
                environment: ["JACK_DEFAULT_SERVER": crashed])
            XCTAssertEqual(result.status, 1, result.stderr)
            XCTAssertTrue(result.stderr.contains("no JACK server named \"\(crashed)\""), result.stderr)
            XCTAssertFalse(FileManager.default.fileExists(atPath: take))
        }
    }

    /// --embedded-server is the one way to get test tones, and scripts/demo asks for it.
    func testDemoScriptAsksForTheEmbeddedServer() throws {
        let demo = try String(contentsOf: ExamplePlugins.repositoryRoot.appendingPathComponent("scripts/demo"), encoding: .utf8)
        XCTAssertTrue(demo.contains("--embedded-server"), "scripts/demo must ask for the private server explicitly")
    }

    // MARK: Descriptors 0, 1 and 2

    /// Started with stdout, stderr or stdin closed, jackhost keeps libjack's metadata database
    /// off descriptors 0-2: audio and messages never land in it, and the server stays healthy.
    func testClosedStandardDescriptorsNeverReachTheServer() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let binary = JackhostBinary.path
            let connect = "--connect 'jhgen:out_.*'"
            let runs: [(String, String?)] = [
                ("exec >&-; \(binary) stream -s \(server.name) \(connect) -d 0.5 -b s16", nil),
                ("exec 2>&-; \(binary) record \(path("closed-stderr.wav")) -s \(server.name) \(connect) -d 0.5 --meter", path("closed-stderr.wav")),
                ("exec <&-; \(binary) record \(path("closed-stdin.wav")) -s \(server.name) \(connect) -d 0.5", path("closed-stdin.wav")),
                (
                    "exec >&- 2>&- <&-; \(binary) run --record \(path("all-closed.wav")) --meter --stream -s \(server.name) \(connect) -d 0.5",
                    path("all-closed.wav")
                ),
            ]
            for (script, take) in runs {
                let result = try JACKFixture.run("/bin/sh", ["-c", script], timeout: 30)
                XCTAssertEqual(result.status, 0, "\(script): \(result.stderr)")
                XCTAssertFalse(result.signalled, script)
                if let take {
                    let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take), script)
                    XCTAssertEqual(header, .init(frames: 24000, channels: 2, sampleRate: 48000), script)
                    XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(take, channels: 2)).firstMismatch, script)
                }
            }
            // The server's database and log are intact: no Berkeley DB panic, and a new client works.
            for word in ["BDB", "PANIC", "fatal region"] { XCTAssertFalse(server.log.contains(word), "\(word) in the server log:\n\(server.log)") }
            let listed = try JACKFixture.run("jack_lsp", ["-s", server.name])
            XCTAssertEqual(listed.status, 0, listed.stderr)
            XCTAssertFalse(listed.stderr.contains("BDB"), listed.stderr)
            let property = try JACKFixture.run("jack_property", ["-s", server.name, "-l"])
            XCTAssertFalse(property.stderr.contains("BDB") || property.stdout.contains("BDB"), property.stderr)
            XCTAssertTrue(PrivateJACKServer.isRunning(server.name), "the server survived")
            reliabilityFigures(
                "stdout, stderr, stdin and all three closed",
                "exit 0 each; takes 24000 frames, bit-exact; no BDB message in the server log or from jack_lsp/jack_property afterwards")
        }
    }

    // MARK: Takes are never overwritten

    func testOverwriteIsOptInAndAutomaticNamesNeverCollide() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let take = path("take.wav")
            try Data("an earlier take".utf8).write(to: URL(fileURLWithPath: take))
            let refused = try JackhostBinary.run(["record", take, "-s", server.name, "-d", "0.2"])
            XCTAssertEqual(refused.status, 2, refused.stderr)
            XCTAssertEqual(try String(contentsOfFile: take, encoding: .utf8), "an earlier take")
            let replaced = try JackhostBinary.run(["record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "0.2", "--overwrite"])
            XCTAssertEqual(replaced.status, 0, replaced.stderr)
            XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(take)?.frames, 9600)

            // Split segments of this take never clobber: a second split run is refused whole.
            let split = path("split.wav")
            let first = try JackhostBinary.run(["record", split, "-s", server.name, "--split", "1s", "-d", "2.5", "-q"])
            XCTAssertEqual(first.status, 0, first.stderr)
            let segments = (1...3).map { TakeFilesNames.numbered(split, $0) }
            let contents = try segments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
            let again = try JackhostBinary.run(["record", split, "-s", server.name, "--split", "1s", "-d", "2.5", "-q"])
            XCTAssertEqual(again.status, 2, again.stderr)
            XCTAssertTrue(again.stderr.contains("split-0001.wav exists from an earlier take"), again.stderr)
            XCTAssertEqual(try segments.map { try Data(contentsOf: URL(fileURLWithPath: $0)) }, contents)

            // `record` without FILE: time-stamped names, two at once in one directory, no collision.
            let children = try (0..<2).map { index in
                try JackhostBinary.startIn(
                    workDirectory,
                    [
                        "record", "-s", server.name, "-n", "recorder\(index)",
                        "--connect", "jhgen:out_.*", "-d", "0.5", "-q",
                    ])
            }
            for child in children { XCTAssertEqual(child.wait(), 0, child.stderr) }
            let automatic = try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter {
                $0.hasPrefix("jackhost-") && $0.hasSuffix(".wav")
            }
            XCTAssertEqual(automatic.count, 2, "\(automatic)")
            for name in automatic {
                XCTAssertNotNil(name.range(of: #"^jackhost-\d{8}-\d{6}(-\d+)?\.wav$"#, options: .regularExpression), name)
                XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(path(name))?.frames, 24000, name)
            }
        }
    }

    // MARK: One destination, one writer

    /// `record -` puts FLAC on stdout; meters and summaries go to stderr, never into the stream.
    func testAudioOnStdoutKeepsEverythingForPeopleOnStderr() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let output = path("stdout.flac")
            let result = try JACKFixture.run(
                "/bin/sh", ["-c", "\(JackhostBinary.path) record - -f flac --meter -s \(server.name) --connect 'jhgen:out_.*' -d 0.5 > \(output)"],
                timeout: 30)
            XCTAssertEqual(result.status, 0, result.stderr)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
            XCTAssertEqual(String(decoding: bytes.prefix(4), as: UTF8.self), "fLaC", "stdout carries nothing but FLAC")
            XCTAssertTrue(result.stderr.contains("channel  peak_dBFS"), "the meter summary went to stderr: \(result.stderr)")
            XCTAssertEqual(try AudioFileCheck.sndfileInfoHeader(output), .init(frames: 24000, channels: 2, sampleRate: 48000))
        }
    }

    // MARK: No silent surprises

    func testChannelCountAndSourcesThatDoNotMatchAreNamed() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let more = try JackhostBinary.run(["meter", "-s", server.name, "-c", "3", "-d", "0.2"])
            XCTAssertEqual(more.status, 0, more.stderr)
            XCTAssertTrue(
                more.stderr.contains("warning: --channels 3 asks for more inputs than there are sources: jackhost:in_3 stays silent"),
                more.stderr)
            let many = try JackhostBinary.run(["meter", "-s", server.name, "-c", "1024", "-d", "0.2", "-q"])
            XCTAssertEqual(many.status, 0, many.stderr)
            XCTAssertTrue(many.stderr.contains("jackhost:in_3, jackhost:in_4 … jackhost:in_1024 (1022 in all)"), many.stderr)
            let fewer = try JackhostBinary.run(["meter", "-s", server.name, "-c", "1", "--connect", "system:capture_.*", "-d", "0.2"])
            XCTAssertEqual(fewer.status, 0, fewer.stderr)
            XCTAssertTrue(fewer.stderr.contains("1 matched source found no input and is left out: system:capture_2"), fewer.stderr)
        }
    }

    // MARK: Every waiting state ends within a second of a signal

    /// Waiting for a FIFO's reader: before, open(2) blocked and SA_RESTART restarted it, so
    /// only SIGKILL ended jackhost.
    func testSignalsEndTheWaitForAFIFOReader() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            for signal in [SIGTERM, SIGINT, SIGHUP] {
                let fifo = path("fifo-\(signal)")
                XCTAssertEqual(mkfifo(fifo, 0o644), 0)
                let child = try JackhostBinary.start(["stream", "-s", server.name, "-o", fifo], directory: workDirectory)
                usleep(700_000)
                XCTAssertTrue(child.process.isRunning, "waiting for a reader: \(child.stderr)")
                let sent = Date()
                child.signal(signal)
                let ended = exit(of: child, since: sent)
                XCTAssertEqual(ended.status, 0, child.stderr)
                XCTAssertLessThan(ended.seconds, 1, "signal \(signal) while waiting for a FIFO reader")
                XCTAssertTrue(child.stderr.contains("stopped while waiting for a reader"), child.stderr)
                reliabilityFigures("signal \(signal) while waiting for a FIFO reader", "exit 0 after \(ended.seconds.formatted(places: 3)) s")
            }
        }
    }

    /// SIGHUP (an ssh session that drops) finalises the take, as SIGINT does; SIGUSR1 prints
    /// progress and the take goes on. Before, both killed jackhost with the header unwritten.
    func testHangupFinalisesTheTakeAndUser1PrintsProgress() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let take = path("hangup.wav")
            let child = try JackhostBinary.start(
                ["record", take, "-s", server.name, "--connect", "jhgen:out_.*", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: take) }, child.stderr)
            usleep(700_000)
            child.signal(SIGUSR1)
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 3) { child.stderr.contains("status: ") }, child.stderr)
            XCTAssertTrue(child.process.isRunning, "SIGUSR1 does not stop the take")
            usleep(500_000)
            let sent = Date()
            child.signal(SIGHUP)
            let ended = exit(of: child, since: sent)
            XCTAssertEqual(ended.status, 0, child.stderr)
            XCTAssertLessThan(ended.seconds, 1)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take))
            let reported = child.stdout.split(separator: " ").dropFirst().first.flatMap { Int($0) }
            XCTAssertEqual(header.frames, reported, "the header holds every frame reported: \(child.stdout)")
            XCTAssertGreaterThan(header.frames, 48000)
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(take, channels: 2)).firstMismatch)
            reliabilityFigures(
                "SIGHUP mid-take (SIGUSR1 before it)",
                "progress line printed, take went on; exit 0 after \(ended.seconds.formatted(places: 3)) s; header \(header.frames) frames = reported; bit-exact"
            )
        }
    }

    /// Waiting for a lost server to return (--reconnect): SIGINT ends it within a second and
    /// the take recorded before the loss stays valid.
    func testSignalWhileWaitingForTheServerToReturn() throws {
        try JACKFixture.serialized {
            let name = PrivateJACKServer.uniqueName(prefix: "jhtest-wait")
            let server = PrivateJACKServer(name: name, captureChannels: 2, synchronous: true)
            try server.start()
            defer {
                server.stop()
                // The crash below leaves the server's registry slot behind.
                PrivateJACKServer.reclaimRegistrySlot(name: name)
            }
            let generator = try TestSignalSource(name: "jhgen", server: name, channels: 2, signal: .sequence)
            let take = path("lost.wav")
            let child = try JackhostBinary.start(
                ["record", take, "-s", name, "--connect", "jhgen:out_.*", "--reconnect", "--no-meter"],
                directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: take) }, child.stderr)
            usleep(800_000)
            server.crash()
            generator.abandon()
            XCTAssertTrue(JACKFixture.waitUntil(timeout: 5) { child.stderr.contains("waiting for it to return") }, child.stderr)
            usleep(500_000)
            let sent = Date()
            child.signal(SIGINT)
            let ended = exit(of: child, since: sent)
            XCTAssertEqual(ended.status, 0, child.stderr)
            XCTAssertLessThan(ended.seconds, 1, "SIGINT while waiting for the server")
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take))
            XCTAssertGreaterThan(header.frames, 24000)
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(take, channels: 2)).firstMismatch)
            reliabilityFigures(
                "SIGINT while waiting for a lost server",
                "exit 0 after \(ended.seconds.formatted(places: 3)) s; the take before the loss holds \(header.frames) frames, bit-exact")
        }
    }

    /// A deferred plugin that needs 100 ms per 5.3 ms block. Before, exit waited for its ring to
    /// drain (40 s for a 3 s take) and ignored SIGINT; now a signal ends the run within a second,
    /// the recording is finalised, and what the slow consumer never got is reported by name.
    func testSlowConsumerCannotHoldTheExitHostage() throws {
        let plugin = try SlowPlugin.build(in: workDirectory)
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }

            // 1. SIGINT while it runs.
            let take = path("slow.wav")
            let child = try JackhostBinary.start(
                [
                    // In jackhost's own process: its drain limit is what this checks. (Isolated,
                    // the plugin's process has the same limit; see PluginIsolationTests.)
                    "run", "--record", take, "--plugin", plugin, "--plugin-isolation", "none", "-s", server.name,
                    "--connect", "jhgen:out_.*",
                ], directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: take) }, child.stderr)
            usleep(1_500_000)
            var sent = Date()
            child.signal(SIGINT)
            var ended = exit(of: child, since: sent)
            XCTAssertLessThan(ended.seconds, 1, "SIGINT with a slow consumer: \(child.stderr)")
            XCTAssertEqual(ended.status, 1, "frames a consumer never received make it a failure: \(child.stderr)")
            XCTAssertTrue(child.stderr.contains("still queued for consumer \"SlowPlugin\""), child.stderr)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take))
            XCTAssertGreaterThan(header.frames, 48000, "the recorder's own take is complete and finalised")
            XCTAssertNil(SequenceCheck.verify(try AudioFileCheck.readWithSox(take, channels: 2)).firstMismatch)
            reliabilityFigures(
                "SIGINT with a deferred plugin 19x slower than real time",
                "exit 1 after \(ended.seconds.formatted(places: 3)) s; the recorder's take \(header.frames) frames, bit-exact; \(child.stderr.split(separator: "\n").first { $0.contains("gave up") } ?? "")"
            )

            // 2. --duration ends: the drain gets 5 s, then what is left is given up and reported.
            let started = Date()
            let timed = try JackhostBinary.run(["run", "--plugin", plugin, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1"])
            let seconds = Date().timeIntervalSince(started)
            XCTAssertEqual(timed.status, 1, timed.stderr)
            XCTAssertLessThan(seconds, 9, "a 1 s take with a slow consumer ends after its 5 s drain limit")
            let abandoned = timed.stderr.components(separatedBy: "gave up ").dropFirst().first?.split(separator: " ").first.flatMap { Int($0) }
            XCTAssertGreaterThan(abandoned ?? 0, 20_000, timed.stderr)
            reliabilityFigures(
                "1 s take with the same plugin",
                "exit 1 after \(seconds.formatted(places: 2)) s (drain limit 5 s); \(abandoned ?? -1) frames given up, reported by consumer")

            // 3. A second signal during that drain ends it at once.
            let drained = try JackhostBinary.start(
                ["run", "--plugin", plugin, "-s", server.name, "--connect", "jhgen:out_.*", "-d", "1"],
                directory: workDirectory)
            usleep(2_500_000)  // the 1 s take is over; the drain is under way
            XCTAssertTrue(drained.process.isRunning)
            sent = Date()
            drained.signal(SIGTERM)
            ended = exit(of: drained, since: sent)
            XCTAssertLessThan(ended.seconds, 1, "a signal during the drain: \(drained.stderr)")
            XCTAssertTrue(drained.stderr.contains("gave up"), drained.stderr)
            reliabilityFigures("SIGTERM during that drain", "exit after \(ended.seconds.formatted(places: 3)) s")
        }
    }
}

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

/// Segment names as the recorder makes them.
enum TakeFilesNames {
    static func numbered(_ path: String, _ index: Int) -> String {
        let url = URL(fileURLWithPath: path)
        let stem = url.deletingPathExtension().path
        return "\(stem)-\(String(format: "%04d", index)).\(url.pathExtension)"
    }
}

extension JackhostBinary {
    /// Starts jackhost with `directory` as its working directory (for automatic names).
    static func startIn(_ directory: URL, _ arguments: [String]) throws -> RunningJackhost {
        try RunningJackhost(arguments: arguments, directory: directory, workingDirectory: directory)
    }
}
