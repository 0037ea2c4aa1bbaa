import Foundation
import JackHost
import JackHostTesting
import XCTest

/// Triggered takes: each trigger opens a new file that starts `--pre-roll` before the trigger,
/// from the audio kept meanwhile, bit-exact; the matching stop finalises it.
final class TriggeredTakeTests: XCTestCase {
    var workDirectory: URL!

    override func setUpWithError() throws {
        workDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("jackhost-trigger-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workDirectory, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: workDirectory)
    }

    private func path(_ name: String) -> String { workDirectory.appendingPathComponent(name).path }

    private func takes() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: workDirectory.path).filter { $0.hasPrefix("take-") && $0.hasSuffix(".wav") }
            .sorted()
    }

    private func start(_ arguments: [String]) throws -> RunningJackhost {
        let child = try JackhostBinary.start(arguments, directory: workDirectory)
        // Capturing once the summary of the session is printed (its ports exist).
        XCTAssertTrue(JACKFixture.waitUntil(timeout: 10) { child.stderr.contains("capturing") }, child.stderr)
        return child
    }

    /// `--trigger -40dBFS --hold 0.5s --pre-roll 0.25`: silence, then the sequence on both
    /// inputs, then silence. The take's first frame at or above -40 dBFS is exactly 12,000
    /// frames (the pre-roll) in; before it, the silence that preceded the trigger; after its
    /// last loud frame exactly 24,000 quiet frames (the hold); in between, the sequence bit-exact.
    func testLevelTriggerStartsWithItsPreRollAndStopsAfterTheHold() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let child = try start([
                "record", path("take.wav"), "-s", server.name, "--trigger", "-40dBFS", "--hold", "0.5s", "--pre-roll", "0.25",
            ])
            usleep(700_000)
            XCTAssertEqual(try takes(), [], "no take before the trigger")
            try generator.connect(to: ["jackhost:in_1", "jackhost:in_2"])
            usleep(1_000_000)
            for (source, destination) in zip(generator.outputPortNames, ["jackhost:in_1", "jackhost:in_2"]) {
                generator.client.disconnect(source, from: destination)
            }
            usleep(1_000_000)
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)
            XCTAssertEqual(try takes(), ["take-0001.wav"], child.stderr)
            let read = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path("take-0001.wav")))
            XCTAssertEqual(try AudioFileCheck.readWithSox(path("take-0001.wav"), channels: 2), read.channels, "sox agrees")
            let loud = { (i: Int) in read.channels.contains { abs($0[i]) >= 0.01 } }
            let frames = read.header.frames
            let firstLoud = try XCTUnwrap((0..<frames).first(where: loud))
            let lastLoud = try XCTUnwrap((0..<frames).last(where: loud))
            XCTAssertEqual(firstLoud, 12000, "the pre-roll: 0.25 s before the trigger")
            XCTAssertTrue((0..<firstLoud).allSatisfy { i in read.channels.allSatisfy { abs($0[i]) < 0.01 } })
            XCTAssertEqual(frames - lastLoud - 1, 24000, "the hold: 0.5 s below the threshold, then the take ends")
            // The two inputs are disconnected one after the other, so the sequence is checked up to
            // the last frame where every input still carries it.
            let lastOfAll = try XCTUnwrap(read.channels.map { samples in samples.lastIndex { $0 != 0 } ?? 0 }.min())
            let report = SequenceCheck.verifyEachChannel(read.channels.map { Array($0[..<(lastOfAll + 1)]) })
            XCTAssertNil(report.firstMismatch, report.description)
            XCTAssertGreaterThan(report.checkedFrames, 30000, report.description)
        }
    }

    /// `--signal-trigger --pre-roll 0.5`: SIGUSR1 starts a take, SIGUSR2 stops it, twice. Each
    /// take is a new file that opens with 0.5 s from before its SIGUSR1 and is the sequence,
    /// bit-exact; the second starts after the first ends.
    func testSignalTriggerMakesOneFilePerTakeEachWithItsPreRoll() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let child = try start([
                "record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "--signal-trigger", "--pre-roll", "0.5",
            ])
            usleep(1_000_000)
            var sent: [Int] = []
            for _ in 0..<2 {
                sent.append(generator.framesPlayed)
                child.signal(SIGUSR1)
                usleep(700_000)
                child.signal(SIGUSR2)
                usleep(700_000)
            }
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)
            XCTAssertEqual(try takes(), ["take-0001.wav", "take-0002.wav"], child.stderr)
            var previousEnd = -1
            for (index, name) in try takes().enumerated() {
                let read = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path(name)))
                let report = SequenceCheck.verify(read.channels)
                XCTAssertNil(report.firstMismatch, "\(name): \(report.description)")
                XCTAssertEqual(report.leadingSilence, 0, name)
                let first = SequenceCheck.frame(at: 0, in: read.channels)
                // The signal was asked for when the generator had played sent[index] frames; the
                // take starts 24,000 frames before the cycle that saw the request.
                XCTAssertLessThanOrEqual(first, sent[index] - 24000 + 4800, "\(name) opens with its pre-roll")
                XCTAssertGreaterThan(read.header.frames, 24000 + 24000, "\(name): pre-roll and the take")
                XCTAssertGreaterThan(first, previousEnd, "\(name) starts after the previous take")
                previousEnd = first + read.header.frames - 1
            }
        }
    }

    /// `--transport --pre-roll 0.25`: a take while JACK transport rolls (started and stopped
    /// with jack_transport), opening 12,000 frames before the first rolling cycle.
    func testTransportTriggerRecordsWhileTransportRolls() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let child = try start(["record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "--transport", "--pre-roll", "0.25"])
            usleep(800_000)
            let play = try JACKFixture.run(
                "/bin/sh", ["-c", "printf 'play\\nquit\\n' | jack_transport"], environment: ["JACK_DEFAULT_SERVER": server.name])
            XCTAssertEqual(play.status, 0, play.stderr)
            usleep(800_000)
            let stop = try JACKFixture.run(
                "/bin/sh", ["-c", "printf 'stop\\nquit\\n' | jack_transport"], environment: ["JACK_DEFAULT_SERVER": server.name])
            XCTAssertEqual(stop.status, 0, stop.stderr)
            usleep(500_000)
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(timeout: 10), 0, child.stderr)
            XCTAssertEqual(try takes(), ["take-0001.wav"], child.stderr)
            let read = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path("take-0001.wav")))
            let report = SequenceCheck.verify(read.channels)
            XCTAssertNil(report.firstMismatch, report.description)
            XCTAssertGreaterThan(read.header.frames, 12000 + 24000, "pre-roll and about 0.8 s of rolling")
            XCTAssertLessThan(read.header.frames, 12000 + 72000, "the take ended when transport stopped")
        }
    }

    /// `--freewheel --pre-roll 0.1`: a take while the server freewheels (jack_freewheel y, n).
    func testFreewheelTriggerRecordsTheRender() throws {
        try JACKFixture.withServer(captureChannels: 2) { server in
            let generator = try TestSignalSource(name: "jhgen", server: server.name, channels: 2, signal: .sequence)
            defer { generator.stop() }
            let child = try start([
                "record", path("take.wav"), "-s", server.name, "--connect", "jhgen:out_.*", "--freewheel", "--pre-roll", "0.1",
            ])
            usleep(500_000)
            let environment = ["JACK_DEFAULT_SERVER": server.name]
            XCTAssertEqual(try JACKFixture.run("jack_freewheel", ["y"], environment: environment).status, 0)
            usleep(200_000)
            XCTAssertEqual(try JACKFixture.run("jack_freewheel", ["n"], environment: environment).status, 0)
            usleep(500_000)
            child.signal(SIGINT)
            XCTAssertEqual(child.wait(timeout: 20), 0, child.stderr)
            XCTAssertEqual(try takes(), ["take-0001.wav"], child.stderr)
            let read = try XCTUnwrap(AudioFileCheck.readWithLibsndfile(path("take-0001.wav")))
            let report = SequenceCheck.verify(read.channels)
            XCTAssertNil(report.firstMismatch, report.description)
            XCTAssertGreaterThan(read.header.frames, 4800, "at least the pre-roll")
        }
    }
}
