import Foundation
import JackHost
import JackHostTesting
import XCTest

/// ABI version 2 from C, end to end: events reach `handle_event` on the thread that calls
/// `process`, the host's log and frame clock work, published results reach the summary, the
/// meter and `--results FILE` (in jackhost's process and from an isolated plugin's process), a
/// refused option value is exit status 2, and a version 1 plugin still loads.
final class PluginABITwoTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-abi2-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: workDirectory) }

    private func file(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    /// Counts blocks and events, publishes `blocks`, `clock.frames` (the frame clock at the last
    /// block) and `events.xrun`; logs at create and finish; refuses `gain` below 0 as the
    /// user's mistake. With -DVERSION_ONE it is a version 1 plugin (its descriptor ends at destroy).
    static let source = """
        #include "jackhost_plugin.h"
        #include <stdio.h>
        #include <stdlib.h>
        #include <pthread.h>
        typedef struct {
            const jackhost_host_t *host; FILE *out; long blocks; long events[8]; int wrong_thread;
            pthread_t process_thread; int have_thread;
            long rate, channels, frames, first_size, odd_sizes, last_size;
        } v2_t;
        #ifndef BLOCK_FRAMES
        #define BLOCK_FRAMES 0
        #endif
        #ifndef RATE
        #define RATE 0
        #endif
        static void *create2(const jackhost_plugin_descriptor_t *d, const jackhost_plugin_key_value_t *pairs, uint32_t count,
                             const jackhost_host_t *host, int32_t *status, char *error, size_t capacity) {
            double gain = atof(jackhost_plugin_find_option(pairs, count, "gain"));
            if (gain < 0) {
                *status = JACKHOST_PLUGIN_REFUSED_OPTION;
                jackhost_plugin_set_error(error, capacity, "gain must not be negative");
                return NULL;
            }
            v2_t *p = calloc(1, sizeof *p);
            p->host = host;
            p->out = fopen(jackhost_plugin_find_option(pairs, count, "output"), "w");
            host->log(host, JACKHOST_PLUGIN_LOG_INFO, "hello from create2");
            return p;
        }
        static void *create1(const jackhost_plugin_descriptor_t *d, const jackhost_plugin_key_value_t *pairs, uint32_t count,
                             char *error, size_t capacity) {
            v2_t *p = calloc(1, sizeof *p);
            p->out = fopen(jackhost_plugin_find_option(pairs, count, "output"), "w");
            return p;
        }
        static int32_t prepare(void *i, const jackhost_plugin_format_t *f, char *e, size_t c) {
            v2_t *p = i;
            p->rate = (long)f->sample_rate;
            p->channels = f->channel_count;
            return 0;
        }
        static void note_thread(v2_t *p) {
            if (!p->have_thread) { p->process_thread = pthread_self(); p->have_thread = 1; }
            else if (!pthread_equal(p->process_thread, pthread_self())) p->wrong_thread = 1;
        }
        static void process(void *i, const jackhost_plugin_block_t *b) {
            v2_t *p = i;
            note_thread(p);
            p->blocks++;
            p->frames += b->frame_count;
            if (p->blocks == 1) p->first_size = b->frame_count;
            else if (p->last_size != p->first_size) p->odd_sizes++;  /* only the last may differ */
            p->last_size = b->frame_count;
            if (p->host) {
                p->host->publish(p->host, 0, (double)p->blocks);
                p->host->publish(p->host, 1, (double)p->host->frame_clock(p->host));
                p->host->publish(p->host, 2, (double)p->events[JACKHOST_PLUGIN_EVENT_XRUN]);
                p->host->publish(p->host, 7, 1.0);  /* out of range: ignored */
            }
        }
        static void handle_event(void *i, const jackhost_plugin_event_t *e) {
            v2_t *p = i;
            note_thread(p);
            if (e->kind < 8) p->events[e->kind]++;
        }
        static void finish(void *i) {
            v2_t *p = i;
            fprintf(p->out, "blocks %ld xrun %ld buffer_size %ld wrong_thread %d rate %ld channels %ld frames %ld first %ld odd %ld\\n",
                    p->blocks, p->events[JACKHOST_PLUGIN_EVENT_XRUN], p->events[JACKHOST_PLUGIN_EVENT_BUFFER_SIZE], p->wrong_thread,
                    p->rate, p->channels, p->frames, p->first_size, p->odd_sizes);
            fflush(p->out);
            if (p->host) p->host->log(p->host, JACKHOST_PLUGIN_LOG_WARNING, "finished");
        }
        static void destroy(void *i) { v2_t *p = i; if (p->out) fclose(p->out); free(p); }
        static const jackhost_plugin_option_t options[] = {
            {"output", JACKHOST_PLUGIN_OPTION_STRING, 0, "/dev/null", "where finish writes its counts"},
            {"gain", JACKHOST_PLUGIN_OPTION_DOUBLE, 0, "1", "must not be negative"},
        };
        static const jackhost_plugin_result_t results[] = {
            {"blocks", NULL, "blocks processed"}, {"clock.frames", "frames", "the frame clock at the last block"},
            {"events.xrun", NULL, "xrun events received"},
        };
        #ifdef VERSION_ONE
        static const jackhost_plugin_descriptor_t descriptor = {
            1, 88, "VersionOne", "1.0", JACKHOST_PLUGIN_MODE_REALTIME, 2, options, NULL,
            create1, prepare, process, finish, destroy,
        };
        #else
        static const jackhost_plugin_descriptor_t descriptor = {
            JACKHOST_PLUGIN_ABI_VERSION, sizeof(jackhost_plugin_descriptor_t), "VersionTwo", "2.0", MODE, 2, options, NULL,
            create1, prepare, process, finish, destroy, 3, 0, results, create2, handle_event, BLOCK_FRAMES, 0, RATE,
        };
        #endif
        const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void) { return &descriptor; }
        """

    private func build(_ name: String, defines: [String]) throws -> String {
        let source = workDirectory.appendingPathComponent("\(name).c")
        try Self.source.write(to: source, atomically: true, encoding: .utf8)
        let header = ExamplePlugins.repositoryRoot.appendingPathComponent("Sources/CJackHostPlugin/include").path
        let output = file("lib\(name).so")
        let result = try JACKFixture.run(
            "cc",
            ["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-Wno-unused-function", "-Wno-unused-const-variable", "-I", header]
                + defines.map { "-D\($0)" } + [source.path, "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        return output
    }

    private func counts(_ path: String) throws -> [String: Int] {
        let words = try String(contentsOfFile: path, encoding: .utf8).split(whereSeparator: { $0 == " " || $0 == "\n" })
        return Dictionary(uniqueKeysWithValues: stride(from: 0, to: words.count - 1, by: 2).map { (String(words[$0]), Int(words[$0 + 1]) ?? -1) })
    }

    private func jsonLines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], String($0))
        }
    }

    /// A real-time v2 plugin in jackhost's process, beside a generator that overruns its cycle
    /// (so the server reports xruns): events, log, frame clock and results all arrive.
    func testEventsLogClockAndResultsInProcess() throws {
        let plugin = try build("VersionTwo", defines: ["MODE=JACKHOST_PLUGIN_MODE_REALTIME"])
        let counts = file("counts.txt"), results = file("results.jsonl")
        try JACKFixture.withServer(captureChannels: 2) { server in
            let stalling = try JackhostBinary.start(
                ["signal", "-s", server.name, "-n", "jhstall", "-c", "2", "--stall-ms", "40", "-d", "8"], directory: workDirectory)
            defer { stalling.signal(SIGTERM) }
            XCTAssertTrue(
                JACKFixture.waitUntil { (try? JACKFixture.run("jack_lsp", ["-s", server.name]).stdout.contains("jhstall:out_1")) ?? false })
            let result = try JackhostBinary.run([
                "run", "--plugin", "\(plugin):output=\(counts)", "--results", results, "-s", server.name,
                "--connect", "jhstall:out_.*", "-d", "3", "--meter",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stderr.contains("jackhost: plugin VersionTwo: hello from create2"), result.stderr)
            XCTAssertTrue(result.stderr.contains("jackhost: plugin VersionTwo: warning: finished"), result.stderr)
            XCTAssertTrue(result.stdout.contains("results VersionTwo: blocks "), "the summary shows the results: \(result.stdout)")
        }
        let seen = try self.counts(counts)
        XCTAssertEqual(seen["wrong_thread"], 0, "events arrive on the thread that calls process")
        XCTAssertGreaterThan(seen["xrun"] ?? 0, 0, "xrun events reached the plugin: \(seen)")
        let lines = try jsonLines(results)
        let summary = try XCTUnwrap(lines.last)
        XCTAssertEqual(summary["summary"] as? Bool, true)
        XCTAssertEqual(summary["plugin"] as? String, "VersionTwo")
        let values = try XCTUnwrap(summary["results"] as? [String: Double])
        XCTAssertEqual(values["blocks"].map(Int.init), seen["blocks"], "the last published block count is the plugin's own")
        XCTAssertEqual(values["events.xrun"].map(Int.init), seen["xrun"])
        let blocks = try XCTUnwrap(values["blocks"]), clock = try XCTUnwrap(values["clock.frames"])
        XCTAssertEqual(clock, (blocks - 1) * 256, "the frame clock counts the frames before the block")
        XCTAssertGreaterThan(lines.count, 2, "a line a second while the take runs, then the summary")
    }

    /// The same plugin, deferred, in its own process beside --record: results cross the process
    /// boundary into the summary and --results FILE.
    func testResultsFromAnIsolatedPluginReachTheSummaryAndTheFile() throws {
        let plugin = try build("VersionTwo", defines: ["MODE=JACKHOST_PLUGIN_MODE_DEFERRED"])
        let results = file("isolated.jsonl")
        try JACKFixture.withServer(captureChannels: 2, synchronous: false) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let result = try JackhostBinary.run([
                "run", "--record", file("take.wav"), "--plugin", plugin, "--results", results, "-s", server.name,
                "--connect", "jhgen:out_.*", "-d", "2",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdout.contains("results VersionTwo: blocks "), result.stdout)
            XCTAssertTrue(result.stderr.contains("jackhost: plugin VersionTwo: hello from create2"), "logged from its own process: \(result.stderr)")
        }
        let summary = try XCTUnwrap(try jsonLines(results).last)
        XCTAssertEqual(summary["summary"] as? Bool, true)
        let blocks = try XCTUnwrap((summary["results"] as? [String: Double])?["blocks"])
        XCTAssertGreaterThan(blocks, 300, "2 s of 256-frame blocks, forwarded from the plugin's process: \(summary)")
    }

    func testARefusedOptionValueIsExitStatusTwoWithOneLine() throws {
        let plugin = try build("VersionTwo", defines: ["MODE=JACKHOST_PLUGIN_MODE_REALTIME"])
        try JACKFixture.withServer(captureChannels: 2) { server in
            for isolation in ["none", "process"] {
                let result = try JackhostBinary.run([
                    "run", "--plugin", "\(plugin):gain=-1", "--plugin-isolation", isolation, "--record", file("t-\(isolation).wav"),
                    "-s", server.name, "-d", "1",
                ])
                XCTAssertEqual(result.status, 2, "\(isolation): \(result.stderr)")
                let lines = result.stderr.split(separator: "\n")
                XCTAssertEqual(lines.count, 1, "\(isolation): \(result.stderr)")
                XCTAssertTrue(lines.first?.contains("refused its options: gain must not be negative") ?? false, result.stderr)
                XCTAssertFalse(FileManager.default.fileExists(atPath: file("t-\(isolation).wav")), "nothing recorded")
            }
        }
    }

    func testAVersionOnePluginStillLoadsAndRuns() throws {
        let plugin = try build("VersionOne", defines: ["VERSION_ONE", "MODE=0"])
        let inspect = try JackhostBinary.run(["plugin", "inspect", plugin])
        XCTAssertEqual(inspect.status, 0, inspect.stderr)
        XCTAssertTrue(inspect.stdout.contains("abi:      1"), inspect.stdout)
        let counts = file("v1.txt")
        try JACKFixture.withServer(captureChannels: 2) { server in
            let result = try JackhostBinary.run(["run", "--plugin", "\(plugin):output=\(counts)", "-s", server.name, "-d", "1"])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        XCTAssertGreaterThan(try self.counts(counts)["blocks"] ?? 0, 150, "a version 1 plugin gets its blocks")
        let two = try build("VersionTwo", defines: ["MODE=0"])
        let inspectTwo = try JackhostBinary.run(["plugin", "inspect", two])
        XCTAssertTrue(inspectTwo.stdout.contains("events:   yes"), inspectTwo.stdout)
        XCTAssertTrue(inspectTwo.stdout.contains("results:  blocks, clock.frames (frames), events.xrun"), inspectTwo.stdout)
    }

    /// A deferred plugin asks for 1000-frame blocks at 16 kHz in its descriptor; the user picks
    /// channel 2 with the host's `channels` key. jackhost rebuffers and converts (libsoxr).
    func testFixedSizeBlocksAChannelSubsetAndARate() throws {
        let plugin = try build("VersionTwo", defines: ["MODE=JACKHOST_PLUGIN_MODE_DEFERRED", "BLOCK_FRAMES=1000", "RATE=16000"])
        let inspect = try JackhostBinary.run(["plugin", "inspect", plugin])
        XCTAssertTrue(inspect.stdout.contains("blocks:   1000 frames at 16000 Hz (converted)"), inspect.stdout)
        let counts = file("shaped.txt")
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .tones(baseFrequency: 220, amplitude: 0.5))
            defer { generator.stop() }
            let result = try JackhostBinary.run([
                "run", "--plugin", "\(plugin):output=\(counts),channels=2", "-s", server.name, "--connect", "jhgen:out_.*", "-d", "2",
            ])
            XCTAssertEqual(result.status, 0, result.stderr)
        }
        let seen = try self.counts(counts)
        XCTAssertEqual(seen["rate"], 16000, "prepare got the asked rate: \(seen)")
        XCTAssertEqual(seen["channels"], 1, "one channel, as the user asked")
        XCTAssertEqual(seen["first"], 1000)
        XCTAssertEqual(seen["odd"], 0, "every block but the last is 1000 frames")
        XCTAssertEqual(Double(seen["frames"] ?? 0), 32000, accuracy: 40, "2 s at 16 kHz, the resampler's tail included")
    }

    func testARealtimePluginCannotBeRebuffered() throws {
        let plugin = try build("VersionTwo", defines: ["MODE=JACKHOST_PLUGIN_MODE_REALTIME"])
        let result = try JackhostBinary.run(["run", "--plugin", "\(plugin):block-frames=1024", "-d", "1", "--embedded-server"])
        XCTAssertEqual(result.status, 2, result.stderr)
        XCTAssertTrue(result.stderr.contains("runs in the real-time thread, where blocks cannot be rebuffered"), result.stderr)
        let bad = try JackhostBinary.run(["run", "--plugin", "\(plugin):channels=2-1", "-d", "1", "--embedded-server"])
        XCTAssertEqual(bad.status, 2, bad.stderr)
        XCTAssertTrue(bad.stderr.contains("channels=2-1 is not a channel list"), bad.stderr)
    }
}
