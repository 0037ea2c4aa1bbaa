import CJackHostPlugin
import Foundation
import JackHost
import JackHostPluginSDK
import JackHostPluginTesting
import Synchronization
import XCTest

@testable import JackHostPlugins

/// What the in-process plugins below did, for the tests to read.
private let journal = Mutex<[String]>([])
private func note(_ line: String) { journal.withLock { $0.append(line) } }

/// A real-time plugin written with the SDK: sums its input and reports at finish.
private final class SummingPlugin: RealtimePlugin {
    static let name = "Summing"
    static let version = "2.1.0"
    static let options: [PluginOption] = [
        .double("scale", default: 1, help: "multiply the sum"),
        .int("max-channels", default: 4, help: "refuse wider streams"),
        .bool("fail", default: false, help: "refuse to be created"),
    ]
    struct Refusal: Error, CustomStringConvertible { let description: String }

    private let scale: Double
    private let maxChannels: Int
    private var sum = 0.0
    private var blocks = 0
    private var lastSequence: UInt64 = 0

    init(options: PluginOptions) throws {
        if options.bool("fail") == true { throw Refusal(description: "told to fail — politely") }
        scale = options.double("scale")!
        maxChannels = options.int("max-channels")!
        note("init scale=\(scale) max-channels=\(maxChannels)")
    }
    deinit { note("deinit") }

    func prepare(format: StreamFormat) throws {
        guard format.channelCount <= maxChannels else {
            throw Refusal(description: "at most \(maxChannels) channels, got \(format.channelCount)")
        }
        note("prepare \(format)")
    }
    func process(_ block: AudioBlock) {
        for channel in 0..<block.channelCount { for sample in block.buffers[channel] { sum += Double(sample) } }
        blocks += 1
        lastSequence = block.timestamp.sequence
    }
    func finish() { note("finish sum=\(sum * scale) blocks=\(blocks) last=\(lastSequence)") }
}

/// A deferred plugin written with the SDK: counts drops.
private final class DropCounter: DeferredPlugin {
    static let name = "DropCounter"
    static let version = "1.0"
    private var dropped = 0
    init(options: PluginOptions) throws {}
    func prepare(format: StreamFormat) throws {}
    func consume(_ block: AudioBlock) { dropped += block.droppedFramesBefore }
    func finish() { note("dropped \(dropped)") }
}

/// A real-time plugin using ABI 2 through the SDK: host, results, events, usage errors.
private final class ClockReporter: RealtimePlugin {
    static let name = "ClockReporter"
    static let version = "2.0"
    static let options: [PluginOption] = [.int("limit", default: 10, help: "must be positive")]
    static let results = [PluginResult("blocks", help: "blocks seen"), PluginResult("clock", unit: "frames"), PluginResult("xruns")]

    private let host: PluginHost
    private let blocks: PluginResultHandle, clock: PluginResultHandle, xruns: PluginResultHandle
    private var count = 0
    private var xrunEvents = 0

    convenience init(options: PluginOptions) throws { try self.init(options: options, host: .none) }
    init(options: PluginOptions, host: PluginHost) throws {
        guard options.int("limit")! > 0 else { throw PluginUsageError("limit must be positive") }
        self.host = host
        blocks = host.result("blocks")
        clock = host.result("clock")
        xruns = host.result("xruns")
        host.log("created", level: .warning)
    }
    func prepare(format: StreamFormat) throws {}
    func handle(_ event: AudioSessionEvent) {
        if case .xrun = event { xrunEvents += 1 }
    }
    func process(_ block: AudioBlock) {
        count += 1
        blocks.publish(Double(count))
        clock.publish(Double(host.frameClock))
        xruns.publish(Double(xrunEvents))
    }
    func finish() {}
}

/// A deferred plugin that asks for 1000-frame blocks at 16 kHz.
private final class ShapedAsker: DeferredPlugin {
    static let name = "ShapedAsker"
    static let version = "1.0"
    static let blockFrames: Int? = 1000
    static let sampleRate: Double? = 16000
    init(options: PluginOptions) throws {}
    func prepare(format: StreamFormat) throws {}
    func consume(_ block: AudioBlock) {}
    func finish() {}
}

/// Exports Swift plugins with the SDK and loads the descriptors through the host's own
/// checks and adapters, in one process: the whole C round trip without building a .so.
final class SDKExportTests: XCTestCase {
    override func setUp() { journal.withLock { $0.removeAll() } }

    private func library<P: RealtimePlugin>(_ type: P.Type) throws -> PluginLibrary {
        let pointer = exportPlugin(type).assumingMemoryBound(to: jackhost_plugin_descriptor_t.self)
        return try PluginLibrary.validated(pointer, path: "<in-process \(P.name)>")
    }

    func testDescriptorCarriesTheTypesMetadataAndIsBuiltOnce() throws {
        let pointer = exportPlugin(SummingPlugin.self)
        XCTAssertEqual(pointer, exportPlugin(SummingPlugin.self), "the entry point must return the same descriptor every time")
        XCTAssertNotEqual(pointer, exportPlugin(DropCounter.self))
        let descriptor = pointer.assumingMemoryBound(to: jackhost_plugin_descriptor_t.self).pointee
        XCTAssertEqual(descriptor.abi_version, JACKHOST_PLUGIN_ABI_VERSION)
        XCTAssertEqual(Int(descriptor.struct_size), MemoryLayout<jackhost_plugin_descriptor_t>.size)

        let opened = try library(SummingPlugin.self)
        XCTAssertEqual(opened.name, "Summing")
        XCTAssertEqual(opened.version, "2.1.0")
        XCTAssertEqual(opened.mode, .realtime)
        XCTAssertEqual(
            opened.options,
            [
                PluginOptionInfo(name: "scale", type: .double, defaultValue: "1.0", help: "multiply the sum"),
                PluginOptionInfo(name: "max-channels", type: .int, defaultValue: "4", help: "refuse wider streams"),
                PluginOptionInfo(name: "fail", type: .bool, defaultValue: "false", help: "refuse to be created"),
            ])
        let deferred = try PluginLibrary.validated(
            exportPlugin(DropCounter.self).assumingMemoryBound(to: jackhost_plugin_descriptor_t.self), path: "<drops>")
        XCTAssertEqual(deferred.mode, .deferred)
        XCTAssertTrue(deferred.options.isEmpty)
        XCTAssertTrue(deferred.inspectionText.hasSuffix("options:  none"), deferred.inspectionText)
    }

    func testSwiftPluginRunsThroughTheHostAdapter() throws {
        let plugin = try LoadedPlugin(library: library(SummingPlugin.self), options: [("scale", "0.5")])
        let ones = [Float](repeating: 1, count: 1000)
        let report = try PluginTestDriver(blockFrames: 300).run(plugin.makeConsumer().consumer, channels: [ones, ones])
        XCTAssertEqual(report.deliveredBlocks, 4)
        XCTAssertEqual(
            journal.withLock { $0 },
            [
                "init scale=0.5 max-channels=4",
                "prepare 48000 Hz, 2 ch, Float32, non-interleaved",
                "finish sum=1000.0 blocks=4 last=3",
            ])
    }

    func testSwiftErrorsCrossTheABIAsThePluginsOwnText() throws {
        XCTAssertThrowsError(try LoadedPlugin(library: library(SummingPlugin.self), options: [("fail", "yes")])) { error in
            XCTAssertEqual(
                error as? PluginError,
                .createFailed(path: "<in-process Summing>", plugin: "Summing", reason: "told to fail — politely"))
        }
        let plugin = try LoadedPlugin(library: library(SummingPlugin.self), options: [("max-channels", "1")])
        XCTAssertThrowsError(try plugin.makeConsumer().consumer.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))) {
            XCTAssertEqual(
                $0 as? PluginError,
                .prepareRejected(
                    path: "<in-process Summing>", plugin: "Summing",
                    format: "48000 Hz, 2 ch, Float32, non-interleaved",
                    reason: "at most 1 channels, got 2"))
        }
    }

    func testDestroyReleasesTheSwiftInstance() throws {
        var plugin: LoadedPlugin? = try LoadedPlugin(library: library(SummingPlugin.self), options: [])
        XCTAssertNotNil(plugin)
        plugin = nil
        XCTAssertEqual(journal.withLock { $0 }.last, "deinit")
    }

    func testDeferredSwiftPluginSeesDrops() throws {
        let library = try PluginLibrary.validated(
            exportPlugin(DropCounter.self).assumingMemoryBound(to: jackhost_plugin_descriptor_t.self), path: "<drops>")
        let plugin = try LoadedPlugin(library: library, options: [])
        guard case .deferred(let consumer) = plugin.makeConsumer() else { return XCTFail("expected deferred") }
        try PluginTestDriver(blockFrames: 10, droppedCycles: [2, 3, 7]).run(consumer, channels: [[Float](repeating: 0, count: 100)])
        XCTAssertEqual(journal.withLock { $0 }, ["dropped 30"])
    }

    func testErrorTextIsTruncatedAtACharacterBoundary() throws {
        // The host's buffer holds 1023 bytes; a long message of two-byte characters must not be cut mid-character.
        let long = String(repeating: "é", count: 600)
        let pointer = exportPlugin(SummingPlugin.self).assumingMemoryBound(to: jackhost_plugin_descriptor_t.self)
        var error = [CChar](repeating: 0x7F, count: Int(JACKHOST_PLUGIN_ERROR_CAPACITY))
        XCTAssertTrue(long.utf8.count > error.count)
        // Ask the SDK to create with a value that is too long to report in full: an unknown key of 600 'é's.
        let key = strdup(long)!, value = strdup("1")!
        defer {
            free(key)
            free(value)
        }
        var pair = jackhost_plugin_key_value_t(key: key, value: value)
        let instance = error.withUnsafeMutableBufferPointer { buffer in
            pointer.pointee.create(pointer, &pair, 1, buffer.baseAddress, buffer.count)
        }
        XCTAssertNil(instance)
        let bytes = error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        XCTAssertLessThan(bytes.count, error.count)
        XCTAssertNotNil(String(validating: bytes, as: UTF8.self), "valid UTF-8 after truncation")
        XCTAssertTrue(String(decoding: bytes, as: UTF8.self).hasPrefix("no option \"éé"))
    }

    /// ABI 2 through the SDK: declared results reach the host, the host's clock and log reach
    /// the plugin, events arrive through handle(_:), and PluginUsageError is the user's mistake.
    func testVersionTwoHostServicesResultsAndEventsRoundTrip() throws {
        let logged = Mutex<[String]>([])
        LoadedPlugin.setLogHandler { plugin, level, message in logged.withLock { $0.append("\(plugin) \(level.prefix)\(message)") } }
        defer { LoadedPlugin.setLogHandler { _, _, _ in } }
        let library = try library(ClockReporter.self)
        XCTAssertEqual(library.abiVersion, 2)
        XCTAssertEqual(library.results.map(\.name), ["blocks", "clock", "xruns"])
        XCTAssertEqual(library.results[1].unit, "frames")
        XCTAssertTrue(library.handlesEvents)

        let plugin = try LoadedPlugin(library: library, options: [])
        XCTAssertEqual(logged.withLock { $0 }, ["ClockReporter warning: created"])
        guard case .realtime(let consumer) = plugin.makeConsumer() else { return XCTFail("real-time") }
        try consumer.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        let samples = [Float](repeating: 0, count: 64)
        func block(_ sequence: UInt64) {
            samples.withUnsafeBufferPointer { buffer in
                var channel = buffer.baseAddress!
                withUnsafePointer(to: &channel) { channels in
                    consumer.process(
                        AudioBlock(
                            buffers: AudioBufferListView(channels: channels, channelCount: 1, frameCount: 64),
                            timestamp: AudioTimestamp(frameTime: 0, microseconds: 0, sequence: sequence, xrunSincePreviousCycle: false)))
                }
            }
        }
        block(0)
        consumer.handle(.xrun(total: 1))
        consumer.handle(.bufferSizeChanged(frames: 64))
        block(1)
        block(2)
        consumer.finish()
        let results = Dictionary(uniqueKeysWithValues: plugin.latestResults().map { ($0.name, $0.value) })
        XCTAssertEqual(results["blocks"], 3)
        XCTAssertEqual(results["clock"], 128, "the frame clock is the frames before the block")
        XCTAssertEqual(results["xruns"], 1, "the event arrived before the next block")

        XCTAssertThrowsError(try LoadedPlugin(library: library, options: [("limit", "0")])) { error in
            XCTAssertEqual(error as? PluginError, .optionRefused(path: library.path, plugin: "ClockReporter", reason: "limit must be positive"))
            XCTAssertTrue((error as? PluginError)?.isUsageError ?? false, "exit status 2")
        }
    }

    func testASwiftPluginAsksForItsBlocksInTheDescriptor() throws {
        let pointer = exportPlugin(ShapedAsker.self).assumingMemoryBound(to: jackhost_plugin_descriptor_t.self)
        let library = try PluginLibrary.validated(pointer, path: "<in-process ShapedAsker>")
        XCTAssertEqual(library.preferredBlockFrames, 1000)
        XCTAssertEqual(library.preferredSampleRate, 16000)
        XCTAssertTrue(library.inspectionText.contains("blocks:   1000 frames at 16000 Hz (converted)"), library.inspectionText)
    }
}
