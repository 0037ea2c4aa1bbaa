import Foundation
import JackHost
import JackHostTesting
import XCTest

/// A plugin is someone else's code: it may crash, call fatalError, sleep in the real-time
/// thread or hang. Beside `--record` it runs in its own process, as its own JACK client, and
/// whatever it does, the take runs to its full `--duration`, bit-exact, and the summary names the
/// plugin and what happened to it. In jackhost's own process (`--plugin-isolation none`) the
/// watchdog bypasses a real-time plugin that overruns, and `--duration` still ends on time.
///
/// The server runs `jackd -R` in its default asynchronous mode: a late client then delays only
/// itself (with `-S` every client waits for the slowest; see docs/PLUGINS.md). Its periods are
/// 1024 frames: at 256 (5.3 ms) this shared 2-core VM's scheduling hiccups made the async server
/// start cycles before its clients had woken for the last one every few seconds, and a client
/// then misses a cycle or reads one twice (counted as xruns, and said nothing about jackhost).
final class PluginIsolationTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-isolation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    /// A C plugin that misbehaves on purpose after `after` blocks: kind 0 dereferences NULL,
    /// 1 sleeps 100 ms per block, 2 never returns, 3 traps (what Swift's fatalError does).
    /// Built real-time, or deferred with -DDEFERRED (the fault then happens on its worker thread).
    static let faultySource = """
        #include "jackhost_plugin.h"
        #include <stdlib.h>
        #include <unistd.h>
        typedef struct { int kind; long after; long blocks; } faulty_t;
        static void *create(const jackhost_plugin_descriptor_t *d, const jackhost_plugin_key_value_t *pairs,
                            uint32_t count, char *error, size_t capacity) {
            faulty_t *f = calloc(1, sizeof *f);
            f->kind = atoi(jackhost_plugin_find_option(pairs, count, "kind"));
            f->after = atol(jackhost_plugin_find_option(pairs, count, "after"));
            return f;
        }
        static int32_t prepare(void *i, const jackhost_plugin_format_t *format, char *error, size_t capacity) { return 0; }
        static void process(void *i, const jackhost_plugin_block_t *block) {
            faulty_t *f = i;
            if (++f->blocks < f->after) return;
            switch (f->kind) {
            case 0: *(volatile int *)0 = 1; break;
            case 1: usleep(100000); break;
            case 2: for (;;) pause();
            case 3: __builtin_trap();
            }
        }
        static void finish(void *i) {}
        static void destroy(void *i) { free(i); }
        static const jackhost_plugin_option_t options[] = {
            {"kind", JACKHOST_PLUGIN_OPTION_INT, 0, "0", "0 crash, 1 sleep 100 ms, 2 hang, 3 trap"},
            {"after", JACKHOST_PLUGIN_OPTION_INT, 0, "100", "blocks before the fault"},
        };
        #ifdef DEFERRED
        #define MODE JACKHOST_PLUGIN_MODE_DEFERRED
        #else
        #define MODE JACKHOST_PLUGIN_MODE_REALTIME
        #endif
        static const jackhost_plugin_descriptor_t descriptor = {
            JACKHOST_PLUGIN_ABI_VERSION, sizeof(jackhost_plugin_descriptor_t), "Faulty", "1.0", MODE,
            2, options, NULL, create, prepare, process, finish, destroy,
        };
        const jackhost_plugin_descriptor_t *jackhost_plugin_descriptor(void) { return &descriptor; }
        """

    /// Sleeping or blocking in the process callback is exactly what RealtimeSanitizer reports (and
    /// aborts on) in the sanitized build `scripts/test-rtsan` runs; those cases run in the normal build.
    private func skipUnderRealtimeSanitizer() throws {
        if ProcessInfo.processInfo.environment["JACKHOST_EXPECT_RTSAN"] == "1" {
            throw XCTSkip("this plugin breaks the real-time rules on purpose; RealtimeSanitizer would (rightly) abort on it")
        }
    }

    private func buildFaulty(deferred: Bool = false) throws -> String {
        let source = workDirectory.appendingPathComponent("faulty.c")
        try Self.faultySource.write(to: source, atomically: true, encoding: .utf8)
        let header = ExamplePlugins.repositoryRoot.appendingPathComponent("Sources/CJackHostPlugin/include").path
        let output = workDirectory.appendingPathComponent(deferred ? "libFaultyDeferred.so" : "libFaulty.so").path
        let result = try JACKFixture.run(
            "cc", ["-shared", "-fPIC", "-O1", "-I", header] + (deferred ? ["-DDEFERRED"] : []) + [source.path, "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        return output
    }

    private struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
        var wall: Double
        var frames: Int
        /// The frames the sequence jumped over where the server skipped jackhost, and why the
        /// take fails the check, if it does (``SequenceCheck/verifyBesideServerSkips(_:jackhostStderr:xrunsExplainBreaks:)``).
        var check: (jumped: Int, failure: String?)
        var take: String

        var exactness: String { SequenceCheck.exactness(jumped: check.jumped) }
    }

    /// Records `seconds` of a bit-exact sequence beside the plugin and reads the take back.
    private func recordBeside(
        plugin: String, options: String, seconds: Int, extra: [String] = [], file: StaticString = #filePath, line: UInt = #line
    ) throws -> Outcome {
        try JACKFixture.withServer(captureChannels: 2, bufferSize: 1024, synchronous: false, realtime: true) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let take = workDirectory.appendingPathComponent("take-\(UUID().uuidString.prefix(6)).wav").path
            let started = Date()
            let result = try JACKFixture.run(
                JackhostBinary.path,
                [
                    "run", "--record", take, "-s", server.name, "--connect", "jhgen:out_.*", "-d", String(seconds),
                    "--plugin", "\(plugin):\(options)",
                ] + extra,
                timeout: Double(seconds + 40))
            let wall = Date().timeIntervalSince(started)
            JackhostBinary.assertNoSanitizerReport(result.stderr, file: file, line: line)
            let header = try XCTUnwrap(AudioFileCheck.sndfileInfoHeader(take), result.stderr, file: file, line: line)
            let samples = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(take), file: file, line: line).channels
            return Outcome(
                status: result.status, stdout: result.stdout, stderr: result.stderr, wall: wall, frames: header.frames,
                check: SequenceCheck.verifyBesideServerSkips(samples, jackhostStderr: result.stderr), take: take)
        }
    }

    /// The take is whole and bit-exact: every frame of `--duration`, and every frame that reached
    /// jackhost is in it, in order. These tests need an asynchronous server (with `-S` a hung
    /// plugin would stall every client), so the server may skip jackhost now and then: see
    /// ``SequenceCheck/verifyBesideServerSkips(_:jackhostStderr:xrunsExplainBreaks:)``.
    private func assertTakeIsWhole(_ outcome: Outcome, seconds: Int, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(outcome.frames, seconds * 48000, "the take runs to its full --duration: \(outcome.stderr)", file: file, line: line)
        XCTAssertNil(outcome.check.failure, "bit-exact but for reported server skips: \(outcome.stderr)", file: file, line: line)
        XCTAssertTrue(outcome.stdout.contains("silence inserted for 0 dropped frames"), outcome.stdout, file: file, line: line)
    }

    private func lines(_ text: String, containing needle: String) -> [String] {
        text.split(separator: "\n").map(String.init).filter { $0.contains(needle) }
    }

    func testACrashInARealtimePluginRestartsItAndLeavesTheTakeWhole() throws {
        let outcome = try recordBeside(plugin: try buildFaulty(), options: "kind=0,after=100", seconds: 3)
        XCTAssertEqual(outcome.status, 4, "the take is complete, a plugin failed: \(outcome.stderr)")
        assertTakeIsWhole(outcome, seconds: 3)
        XCTAssertFalse(lines(outcome.stderr, containing: "plugin Faulty crashed (SIGSEGV)").isEmpty, outcome.stderr)
        XCTAssertFalse(lines(outcome.stderr, containing: "restarting it in").isEmpty, outcome.stderr)
        XCTAssertFalse(outcome.stderr.contains("Backtracing"), "a plugin's crash is one line, not the runtime's backtrace")
        XCTAssertEqual(lines(outcome.stderr, containing: "plugin Faulty (own process):").count, 1, "the summary names it once")
        reliabilityFigures(
            "real-time plugin dereferences NULL, isolated",
            "exit 4 after \(outcome.wall.formatted(places: 1)) s; take \(outcome.frames) frames, \(outcome.exactness)")
    }

    func testACrashInADeferredPluginsWorkerLeavesTheTakeWhole() throws {
        let outcome = try recordBeside(plugin: try buildFaulty(deferred: true), options: "kind=0,after=100", seconds: 3)
        XCTAssertEqual(outcome.status, 4, outcome.stderr)
        assertTakeIsWhole(outcome, seconds: 3)
        XCTAssertFalse(lines(outcome.stderr, containing: "plugin Faulty crashed (SIGSEGV)").isEmpty, outcome.stderr)
    }

    func testATrapLikeFatalErrorIsReportedAsACrash() throws {
        let outcome = try recordBeside(plugin: try buildFaulty(), options: "kind=3,after=50", seconds: 3)
        XCTAssertEqual(outcome.status, 4, outcome.stderr)
        assertTakeIsWhole(outcome, seconds: 3)
        XCTAssertFalse(lines(outcome.stderr, containing: "plugin Faulty crashed (SIGILL)").isEmpty, outcome.stderr)
    }

    func testAPluginSleeping100msPerCycleIsBypassedInItsOwnProcess() throws {
        try skipUnderRealtimeSanitizer()
        let outcome = try recordBeside(plugin: try buildFaulty(), options: "kind=1,after=20", seconds: 3)
        XCTAssertEqual(outcome.status, 4, outcome.stderr)
        assertTakeIsWhole(outcome, seconds: 3)
        XCTAssertLessThan(outcome.wall, 3 + 5, "a slow plugin cannot stretch the take")
        XCTAssertFalse(lines(outcome.stderr, containing: "jackhost: plugin Faulty: overran its real-time budget").isEmpty, outcome.stderr)
        XCTAssertFalse(lines(outcome.stderr, containing: "bypassed by its watchdog").isEmpty, outcome.stderr)
        reliabilityFigures(
            "real-time plugin sleeps 100 ms per cycle, isolated",
            "exit 4 after \(outcome.wall.formatted(places: 1)) s for -d 3; take \(outcome.frames) frames, \(outcome.exactness); bypassed by the child's watchdog"
        )
    }

    func testAHungPluginIsKilledAndTheTakeIsWhole() throws {
        try skipUnderRealtimeSanitizer()
        let outcome = try recordBeside(plugin: try buildFaulty(), options: "kind=2,after=20", seconds: 5)
        XCTAssertEqual(outcome.status, 4, outcome.stderr)
        assertTakeIsWhole(outcome, seconds: 5)
        XCTAssertFalse(lines(outcome.stderr, containing: "plugin Faulty stopped taking audio for 3 s").isEmpty, outcome.stderr)
        XCTAssertLessThan(outcome.wall, 5 + 12, "stopping never waits on the hung plugin for long")
        reliabilityFigures(
            "real-time plugin never returns from process, isolated",
            "exit 4 after \(outcome.wall.formatted(places: 1)) s for -d 5; take \(outcome.frames) frames, \(outcome.exactness); killed after 3 s without progress"
        )
    }

    /// Records `seconds` beside a plugin that hangs after `blocks` blocks of 1024 frames, and
    /// checks what every such take must show: exit 4, a whole take, the plugin named once with
    /// its results partial, and at most the frames after its last block missed. Returns the
    /// outcome and the frames the plugin was reported to have missed.
    private func hangBefore(
        theEndOf seconds: Int, afterBlocks blocks: Int, file: StaticString = #filePath, line: UInt = #line
    ) throws -> (Outcome, Int?) {
        let outcome = try recordBeside(plugin: try buildFaulty(), options: "kind=2,after=\(blocks)", seconds: seconds)
        XCTAssertEqual(outcome.status, 4, outcome.stderr, file: file, line: line)
        assertTakeIsWhole(outcome, seconds: seconds, file: file, line: line)
        let named = lines(outcome.stderr, containing: "plugin Faulty (own process)")
        XCTAssertEqual(named.count, 1, outcome.stderr, file: file, line: line)
        XCTAssertTrue(named.first?.contains("its results are partial") ?? false, outcome.stderr, file: file, line: line)
        let missed = named.first.flatMap { text in
            text.range(of: "and missed ").flatMap { Int(text[$0.upperBound...].prefix { $0.isNumber }) }
        }
        XCTAssertNotNil(missed, outcome.stderr, file: file, line: line)
        XCTAssertLessThanOrEqual(missed ?? .max, seconds * 48000 - (blocks - 1) * 1024, outcome.stderr, file: file, line: line)
        return (outcome, missed)
    }

    /// A plugin that hangs 1 s into a 4 s take, sooner before the end than the hang detector's
    /// 3 s: the take still ends with the plugin named, the frames it missed, and exit status 4.
    /// Before, the take ended first and jackhost exited 0 as if the plugin's results covered it.
    func testAPluginThatHangsNearTheEndIsNamedWithWhatItMissed() throws {
        try skipUnderRealtimeSanitizer()
        let (outcome, missed) = try hangBefore(theEndOf: 4, afterBlocks: 47)
        // It hung after 47 blocks of 1024 frames: it missed at least the last 2 s of the take.
        XCTAssertGreaterThan(missed ?? 0, 2 * 48000, outcome.stderr)
        reliabilityFigures(
            "real-time plugin hangs 1 s into a 4 s take, isolated",
            "exit 4 after \(outcome.wall.formatted(places: 1)) s; named with \(missed ?? -1) of \(outcome.frames) frames missed; take \(outcome.exactness)"
        )
    }

    /// A whole take shorter than the hang detector's 3 s: the plugin hangs 0.4 s into a 2 s take,
    /// so no detector ever fires, and the end-of-take comparison alone must name it.
    func testAPluginThatHangsInATakeShorterThanTheHangTimeoutIsNamed() throws {
        try skipUnderRealtimeSanitizer()
        let (outcome, missed) = try hangBefore(theEndOf: 2, afterBlocks: 20)
        // It hung after 20 blocks of 1024 frames: it missed at least the take's last second.
        XCTAssertGreaterThan(missed ?? 0, 48000, outcome.stderr)
        reliabilityFigures(
            "real-time plugin hangs 0.4 s into a 2 s take (shorter than the 3 s hang timeout), isolated",
            "exit 4; named with \(missed ?? -1) of \(outcome.frames) frames missed; take \(outcome.exactness)")
    }

    func testAPluginThatKeepsCrashingIsGivenUp() throws {
        let outcome = try recordBeside(plugin: try buildFaulty(), options: "kind=0,after=20", seconds: 8)
        XCTAssertEqual(outcome.status, 4, outcome.stderr)
        assertTakeIsWhole(outcome, seconds: 8)
        XCTAssertEqual(lines(outcome.stderr, containing: "restarting it in").count, 3, outcome.stderr)
        XCTAssertFalse(lines(outcome.stderr, containing: "gave up after 3 restarts").isEmpty, outcome.stderr)
    }

    func testAWellBehavedIsolatedPluginRunsToTheEndAndExitsZero() throws {
        let outcome = try recordBeside(plugin: try buildFaulty(), options: "kind=0,after=100000000", seconds: 2)
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        assertTakeIsWhole(outcome, seconds: 2)
        XCTAssertTrue(lines(outcome.stderr, containing: "plugin").isEmpty, "nothing to report: \(outcome.stderr)")
    }

    /// In jackhost's own process the watchdog is what protects the take: after 8 overruns the
    /// plugin is bypassed, and --duration still ends on time (the late cycles' frames are
    /// counted as skipped, not waited for).
    func testInProcessTheWatchdogBypassesAnOverrunningPlugin() throws {
        try skipUnderRealtimeSanitizer()
        let outcome = try recordBeside(
            plugin: try buildFaulty(), options: "kind=1,after=20", seconds: 3, extra: ["--plugin-isolation", "none"])
        XCTAssertEqual(outcome.status, 4, outcome.stderr)
        XCTAssertLessThan(outcome.wall, 3 + 4, "a 100 ms sleep per cycle used to stretch -d 3 past 40 s")
        XCTAssertEqual(
            lines(outcome.stderr, containing: "plugin Faulty overran its real-time budget").count, 1, "said once, when it happened: \(outcome.stderr)"
        )
        XCTAssertEqual(lines(outcome.stderr, containing: "plugin Faulty was bypassed").count, 1, "and named in the summary")
        // The late cycles' frames never reached jackhost: the stream jumps there, and nothing else differs.
        let gaps = SequenceCheck.verifyGapsFilledWithSilence(
            try XCTUnwrap(AudioFileCheck.readWithLibsndfile(outcome.take)).channels)
        XCTAssertNil(gaps.mismatch, "what was recorded is in order")
        XCTAssertTrue(outcome.stderr.contains("skipped this client"), "the skipped frames are counted: \(outcome.stderr)")
        reliabilityFigures(
            "real-time plugin sleeps 100 ms per cycle, in process",
            "exit 4 after \(outcome.wall.formatted(places: 1)) s for -d 3; bypassed after 8 cycles; take \(outcome.frames) frames")
    }

    /// SIGINT to jackhost with a slow deferred plugin in its own process: the plugin's process
    /// gets SIGTERM and the same half-second drain, so the whole run still ends within a second
    /// or so, with the take finalised and bit-exact.
    func testSIGINTEndsAnIsolatedSlowPluginQuickly() throws {
        let plugin = try SlowPlugin.build(in: workDirectory)
        try JACKFixture.withServer(captureChannels: 2, bufferSize: 1024, synchronous: false, realtime: true) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let take = workDirectory.appendingPathComponent("slow.wav").path
            let child = try JackhostBinary.start(
                ["run", "--record", take, "--plugin", plugin, "-s", server.name, "--connect", "jhgen:out_.*"], directory: workDirectory)
            XCTAssertTrue(JACKFixture.waitUntil { FileManager.default.fileExists(atPath: take) }, child.stderr)
            usleep(1_500_000)
            let sent = Date()
            child.signal(SIGINT)
            let status = child.wait(timeout: 15)
            let seconds = Date().timeIntervalSince(sent)
            XCTAssertLessThan(seconds, 2, "SIGINT with an isolated slow plugin: \(child.stderr)")
            XCTAssertEqual(status, 4, "the take is whole; the plugin lost frames: \(child.stderr)")
            XCTAssertTrue(child.stderr.contains("plugin SlowPlugin: warning:"), "the plugin's process names what it gave up: \(child.stderr)")
            let samples = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(take)).channels
            let check = SequenceCheck.verifyBesideServerSkips(samples, jackhostStderr: child.stderr)
            XCTAssertNil(check.failure, child.stderr)
            reliabilityFigures(
                "SIGINT with a slow deferred plugin in its own process",
                "exit 4 after \(seconds.formatted(places: 2)) s; take \(SequenceCheck.exactness(jumped: check.jumped))")
        }
    }

    func testIsolationNeedsConnectionsToFollow() throws {
        let result = try JACKFixture.run(
            JackhostBinary.path,
            [
                "run", "--record", workDirectory.appendingPathComponent("x.wav").path, "--no-auto-connect", "--plugin", "./libX.so",
                "--plugin-isolation", "process",
            ])
        XCTAssertEqual(result.status, 2)
        XCTAssertEqual(lines(result.stderr, containing: "jackhost:").count, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("--plugin-isolation process needs connections"), result.stderr)
        let unknown = try JACKFixture.run(JackhostBinary.path, ["run", "--plugin", "./libX.so", "--plugin-isolation", "thread"])
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("unknown --plugin-isolation \"thread\"; use process or none"), unknown.stderr)
    }
}
