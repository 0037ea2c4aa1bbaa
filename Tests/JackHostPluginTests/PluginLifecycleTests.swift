import Foundation
import JackHost
import JackHostPluginSDK
import JackHostPluginTesting
import JackHostPlugins
import XCTest

/// Checks the host's side of the ABI with a C probe that records every call it receives.
final class PluginLifecycleTests: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws { directory = try CPluginBuilder.temporaryDirectory() }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    private func buildProbe(_ name: String, deferred: Bool = false) throws -> String {
        try CPluginBuilder.build(
            source: ProbePlugin.source, name: name,
            defines: deferred ? ["PROBE_MODE=JACKHOST_PLUGIN_MODE_DEFERRED"] : [], in: directory)
    }

    func testCreateReceivesTheDescriptorTheUsersValuesThenDefaults() throws {
        let library = try buildProbe("Options")
        let plugin = try LoadedPlugin.load(PluginSpecification(parsing: "\(library):count=12,label=hello world"))
        let probe = try ProbeReader(path: library)
        XCTAssertEqual(
            probe.log,
            [
                "create descriptor=self", "option count=12", "option label=hello world",
                "option gain=1.5", "option reject=false", "option fail-create=false",
            ])
        XCTAssertEqual(plugin.optionValues.count, 5)

        let booleans = try LoadedPlugin.load(PluginSpecification(parsing: "\(library):reject=Off,fail-create=0"))
        XCTAssertEqual(
            booleans.optionValues.map { "\($0.key)=\($0.value)" },
            ["reject=false", "fail-create=false", "gain=1.5", "count=3"], "booleans reach C as true or false")
    }

    func testRealtimeBlocksArriveZeroCopyWithTheirTimestamps() throws {
        let library = try buildProbe("Realtime")
        let plugin = try LoadedPlugin.load(PluginSpecification(parsing: library))
        guard case .realtime(let consumer) = plugin.makeConsumer() else { return XCTFail("expected a real-time consumer") }
        try consumer.prepare(format: StreamFormat(sampleRate: 44100, channelCount: 2))
        let probe = try ProbeReader(path: library)
        XCTAssertEqual(probe.log.last, "prepare size=16 channels=2 rate=44100")

        // A block built by hand, as the engine builds it: the plugin must see this exact pointer table.
        let left: [Float] = [0.25, 0.5, 0.125], right: [Float] = [-1, 0, 1]
        left.withUnsafeBufferPointer { l in
            right.withUnsafeBufferPointer { r in
                let table = UnsafeMutablePointer<UnsafePointer<Float>>.allocate(capacity: 2)
                defer { table.deallocate() }
                table[0] = l.baseAddress!
                table[1] = r.baseAddress!
                let block = AudioBlock(
                    buffers: AudioBufferListView(channels: table, channelCount: 2, frameCount: 3),
                    timestamp: AudioTimestamp(
                        frameTime: 4_294_967_000, microseconds: 123, sequence: 41,
                        xrunSincePreviousCycle: true))
                consumer.process(block)
                XCTAssertEqual(probe["channel_pointer_table"], Int64(Int(bitPattern: table)), "zero copy: the host's own table")
            }
        }
        XCTAssertEqual(probe["processes"], 1)
        XCTAssertEqual(probe["frames"], 3)
        XCTAssertEqual(probe["sum_millis"], 875, "250 + 500 + 125 - 1000 + 0 + 1000")
        XCTAssertEqual(probe["last_sequence"], 41)
        XCTAssertEqual(probe["last_frame_time"], 4_294_967_000)
        XCTAssertEqual(probe["last_channels"], 2)
        XCTAssertEqual(probe["last_struct_size"], 56)
        XCTAssertEqual(probe["xruns"], 1)
        XCTAssertEqual(probe["dropped"], 0)
        consumer.finish()
        consumer.finish()
        XCTAssertEqual(probe["finishes"], 1, "finish reaches the plugin once per accepted prepare")
    }

    func testDeferredPluginSeesDropsAndTheWholeSignal() throws {
        let library = try buildProbe("Deferred", deferred: true)
        let plugin = try LoadedPlugin.load(PluginSpecification(parsing: library))
        XCTAssertEqual(plugin.mode, .deferred)
        guard case .deferred(let consumer) = plugin.makeConsumer() else { return XCTFail("expected a deferred consumer") }
        let ones = [Float](repeating: 1, count: 1000)
        let driver = PluginTestDriver(blockFrames: 100, droppedCycles: [3, 4, 9], xrunCycles: [6])
        let report = try driver.run(consumer, channels: [ones])
        let probe = try ProbeReader(path: library)
        XCTAssertEqual(report.deliveredBlocks, 7)
        XCTAssertEqual(probe["processes"], 7)
        XCTAssertEqual(probe["frames"], 700)
        XCTAssertEqual(probe["dropped"], 200, "cycle 9 was last: its drop has no later block to report it")
        XCTAssertEqual(report.droppedFrames, 300)
        XCTAssertEqual(probe["sum_millis"], 700_000)
        XCTAssertEqual(probe["xruns"], 1)
        XCTAssertEqual(probe["last_sequence"], 8)
        XCTAssertEqual(probe["finishes"], 1)
    }

    func testRefusedPrepareIsNeverFinishedAndAReprepareFinishesFirst() throws {
        let library = try buildProbe("Lifecycle")
        let refusing = try LoadedPlugin.load(PluginSpecification(parsing: "\(library):reject=yes"))
        let format = StreamFormat(sampleRate: 48000, channelCount: 1)
        XCTAssertThrowsError(try refusing.makeConsumer().consumer.prepare(format: format)) { error in
            XCTAssertEqual(
                error as? PluginError,
                .prepareRejected(
                    path: library, plugin: "Probe",
                    format: format.description, reason: "probe refuses 48000 Hz"))
        }
        // The host finishes every consumer at stop, even one whose prepare failed.
        refusing.makeConsumer().consumer.finish()
        let probe = try ProbeReader(path: library)
        XCTAssertEqual(probe["finishes"], 0)

        let plugin = try LoadedPlugin.load(PluginSpecification(parsing: library))
        let consumer = plugin.makeConsumer().consumer
        try consumer.prepare(format: format)
        // A reconnect with a new format: the host finishes, then prepares again.
        consumer.finish()
        try consumer.prepare(format: StreamFormat(sampleRate: 96000, channelCount: 3))
        // A host that prepares twice without finishing still gives the plugin pairs.
        try consumer.prepare(format: format)
        XCTAssertEqual(probe["finishes"], 2)
        XCTAssertEqual(probe["prepares"], 4)
    }

    func testReleasingThePluginFinishesAndDestroysTheInstance() throws {
        let library = try buildProbe("Release")
        var plugin: LoadedPlugin? = try LoadedPlugin.load(PluginSpecification(parsing: library))
        var consumer: (any AudioConsumer)? = plugin?.makeConsumer().consumer
        try consumer?.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        let probe = try ProbeReader(path: library)
        plugin = nil
        XCTAssertEqual(probe["destroys"], 0, "the consumer still holds the instance")
        consumer = nil
        XCTAssertEqual(probe["destroys"], 1)
        XCTAssertEqual(Array(probe.log.suffix(2)), ["finish frames=0", "destroy"], "prepared instances are finished before destroy")
        XCTAssertNil(consumer)
        XCTAssertNil(plugin)
    }

    func testCreateFailureDestroysNothingAndReportsTheReason() throws {
        let library = try buildProbe("FailCreate")
        XCTAssertThrowsError(try LoadedPlugin.load(PluginSpecification(parsing: "\(library):fail-create=on"))) { error in
            XCTAssertEqual(error as? PluginError, .createFailed(path: library, plugin: "Probe", reason: "probe was told to fail"))
        }
        let probe = try ProbeReader(path: library)
        XCTAssertEqual(probe["creates"], 1)
        XCTAssertEqual(probe["destroys"], 0)
    }
}
