import CSndFile
import Foundation
import JackHostTypes
import XCTest

@testable import JackHostConsumers

/// Markers placed while a take records: at the frame of the block they were asked for, in the
/// WAV and RF64 files' `cue ` and `LIST`/`adtl` chunks, read back by libsndfile and by this
/// test's own RIFF walker, and in the sidecar; sidecar only where the container has no cue chunk.
final class MarkerTests: XCTestCase {
    var directory: URL!
    override func setUpWithError() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("markers-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }
    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: directory) }

    /// Feeds `blocks` blocks of 64 frames of a ramp that goes on from `next`.
    private func feed(_ recorder: Recorder, blocks: Int, next: inout Float, channels: Int = 1) {
        for _ in 0..<blocks {
            let samples = (0..<64).map { index in (next + Float(index)) / 65536 }
            next += 64
            withBlock(Array(repeating: samples, count: channels)) { recorder.consume($0) }
        }
    }

    func testMarkersLandAtTheirBlockInWAVAndRF64() throws {
        for container in [AudioContainer.wav, .rf64] {
            let path = directory.appendingPathComponent("take.\(container.fileExtension)").path
            let recorder = Recorder(
                path: path, settings: Recorder.Settings(container: container, sampleFormat: .int24, sidecar: true))
            try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 3))
            var next: Float = 0
            feed(recorder, blocks: 3, next: &next, channels: 3)
            recorder.requestMarker(label: "verse", source: "test")
            feed(recorder, blocks: 2, next: &next, channels: 3)
            recorder.requestMarker(label: nil, source: "keyboard")
            recorder.requestMarker(label: "cough\u{7}\nnext", source: "OSC /jackhost/marker")
            feed(recorder, blocks: 1, next: &next, channels: 3)
            recorder.finish()

            let expected = [
                RIFFWalker.Cue(frame: 192, label: "verse"), RIFFWalker.Cue(frame: 320, label: "marker 2"),
                RIFFWalker.Cue(frame: 320, label: "coughnext"),
            ]
            let riff = try RIFFWalker(path: path)
            XCTAssertEqual(riff.cues, expected, "\(container): the file's own chunks")
            XCTAssertTrue(riff.sizeMatchesFile, "\(container): the RIFF size covers the appended chunks")
            XCTAssertEqual(riff.form, container == .rf64 ? "RF64" : "RIFF")
            XCTAssertEqual(SF_INFOProbe.frames([path]), [384], "\(container): the audio is untouched")
            if container == .wav {
                XCTAssertEqual(libsndfileCues(path), expected.map { ($0.frame, $0.label) }.map(LibsndfileCue.init), "libsndfile reads them")
            }
            XCTAssertEqual(recorder.markers.map(\.frame), [192, 320, 320])
            XCTAssertEqual(recorder.markers.map(\.source), ["test", "keyboard", "OSC /jackhost/marker"])
            XCTAssertTrue(recorder.markers.allSatisfy { $0.inFile && $0.inSidecar && $0.file == path })

            let sidecar = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path + ".json"))) as? [String: Any]
            let markers = try XCTUnwrap(sidecar?["markers"] as? [[String: Any]])
            XCTAssertEqual(markers.compactMap { $0["frame"] as? Int }, [192, 320, 320])
            XCTAssertEqual(markers.compactMap { $0["label"] as? String }, ["verse", "marker 2", "cough\u{7}\nnext"])
            XCTAssertEqual(markers.compactMap { $0["inFile"] as? Bool }, [true, true, true])
        }
    }

    /// `--mark-xruns`: dropped frames are marked where the silence standing in for them begins,
    /// an xrun at its block; without the setting, neither is.
    func testXrunsAndDropsBecomeMarkersWhenAsked() throws {
        for marking in [true, false] {
            let path = directory.appendingPathComponent("xruns-\(marking).wav").path
            var settings = Recorder.Settings(sampleFormat: .int16, sidecar: true)
            settings.markXruns = marking
            let recorder = Recorder(path: path, settings: settings)
            try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
            var next: Float = 0
            feed(recorder, blocks: 2, next: &next)
            withBlock([[Float](repeating: 0.25, count: 64)], dropped: 32) { recorder.consume($0) }  // frames 128-159 lost
            withBlock([[Float](repeating: 0.25, count: 64)], xrun: true) { recorder.consume($0) }
            feed(recorder, blocks: 1, next: &next)
            recorder.finish()
            let cues = try RIFFWalker(path: path).cues
            XCTAssertEqual(
                cues, marking ? [RIFFWalker.Cue(frame: 128, label: "dropped 32 frames"), RIFFWalker.Cue(frame: 224, label: "xrun")] : [],
                "marking \(marking)")
            XCTAssertEqual(recorder.markers.map(\.source), marking ? ["xrun", "xrun"] : [])
            XCTAssertEqual(SF_INFOProbe.frames([path]), [352], "the audio is untouched: 5 blocks and the 32 silent frames")
        }
    }

    /// With splits, a marker belongs to the segment that holds its frame, counted from that
    /// segment's start; a segment without markers has no cue chunk.
    func testAMarkerBelongsToTheSegmentThatHoldsItsFrame() throws {
        let path = directory.appendingPathComponent("log.wav").path
        let recorder = Recorder(path: path, settings: Recorder.Settings(sampleFormat: .int16, split: .seconds(0.004)))  // 192 frames
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 2))
        var next: Float = 0
        feed(recorder, blocks: 1, next: &next, channels: 2)
        recorder.requestMarker(label: "first", source: "test")
        feed(recorder, blocks: 4, next: &next, channels: 2)
        recorder.requestMarker(label: "second", source: "test")
        feed(recorder, blocks: 1, next: &next, channels: 2)
        recorder.finish()
        let files = recorder.files
        XCTAssertEqual(files.count, 2)
        XCTAssertEqual(try RIFFWalker(path: files[0]).cues, [.init(frame: 64, label: "first")])
        XCTAssertEqual(try RIFFWalker(path: files[1]).cues, [.init(frame: 128, label: "second")])
        XCTAssertEqual(recorder.markers.map(\.file), files)
    }

    /// W64 keeps its markers before the audio, as `cue ` and `list` chunks in the room reserved
    /// for them: libsndfile still reads exactly the frames written, with or without `bext`, and
    /// markers that do not fit are said to be in the sidecar only.
    func testW64CarriesMarkersBeforeItsAudio() throws {
        for broadcastWave in [true, false] {
            let path = directory.appendingPathComponent("take-\(broadcastWave).w64").path
            let recorder = Recorder(
                path: path, settings: Recorder.Settings(container: .w64, sampleFormat: .int16, broadcastWave: broadcastWave, sidecar: true))
            try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
            var next: Float = 0
            feed(recorder, blocks: 2, next: &next)
            recorder.requestMarker(label: "here", source: "test")
            feed(recorder, blocks: 1, next: &next)
            recorder.finish()
            XCTAssertEqual(recorder.markers.map(\.inFile), [true])
            XCTAssertEqual(try W64Walker(path: path).cues, [.init(frame: 128, label: "here")])
            XCTAssertEqual(SF_INFOProbe.frames([path]), [192], "libsndfile reads the audio and nothing else")
        }
        let path = directory.appendingPathComponent("many.w64").path
        let recorder = Recorder(path: path, settings: Recorder.Settings(container: .w64, sampleFormat: .int16))
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        var next: Float = 0
        let long = String(repeating: "x", count: 255)
        for _ in 0..<150 {
            recorder.requestMarker(label: long, source: "test")
            feed(recorder, blocks: 1, next: &next)
        }
        recorder.finish()
        let kept = try W64Walker(path: path).cues.count
        XCTAssertTrue((100..<150).contains(kept), "\(kept) of 150 long-labelled markers fit")
        XCTAssertTrue(
            recorder.takeNotes().contains { $0.contains("\(150 - kept) of 150 markers did not fit") }, "\(recorder.takeNotes())")
        XCTAssertEqual(SF_INFOProbe.frames([path]), [150 * 64])
    }

    /// A start asked for at a frame the writer has already passed acts where the writer is, and
    /// the recorder says by how many frames it was late; a stop at a frame still ahead is exact.
    func testAFrameTimedStartThatCameLateIsANote() throws {
        let path = directory.appendingPathComponent("late.wav").path
        let recorder = Recorder(path: path, settings: Recorder.Settings(sampleFormat: .int16, trigger: .request))
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        // 64-frame blocks with cycle times: block n starts at frame time 1000 + 64 n.
        func feedTimed(_ range: Range<Int>) {
            for index in range {
                let samples = [Float](repeating: 0.25, count: 64)
                samples.withUnsafeBufferPointer { buffer in
                    var channel = buffer.baseAddress!
                    withUnsafePointer(to: &channel) { pointers in
                        let view = AudioBufferListView(channels: pointers, channelCount: 1, frameCount: 64)
                        let time = AudioTimestamp(
                            frameTime: UInt32(1000 + 64 * index), microseconds: UInt64(1_000_000 + 1333 * index),
                            sequence: UInt64(index), xrunSincePreviousCycle: false)
                        recorder.consume(AudioBlock(buffers: view, timestamp: time))
                    }
                }
            }
        }
        feedTimed(0..<4)
        recorder.requestTakeStart(atFrame: 1005)  // in block 0, long written
        recorder.requestTakeStop(atFrame: 1000 + 64 * 6 + 10)  // in block 6, still ahead
        feedTimed(4..<8)
        recorder.finish()
        // Block 4 starts at frame time 1256: 251 frames after 1005.
        XCTAssertTrue(
            recorder.takeNotes().contains { $0.contains("a start asked for at its own frame came 251 frame(s) after the writer had passed it") })
        XCTAssertEqual(SF_INFOProbe.frames(recorder.files), [64 * 2 + 10], "from block 4's start to the stop's frame")
    }

    /// FLAC has no cue chunk: the markers are in the sidecar, and say so.
    func testContainersWithoutACueChunkKeepMarkersInTheSidecar() throws {
        for container in [AudioContainer.flac] {
            let path = directory.appendingPathComponent("take.\(container.fileExtension)").path
            let recorder = Recorder(path: path, settings: Recorder.Settings(container: container, sampleFormat: .int16, sidecar: true))
            try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
            var next: Float = 0
            feed(recorder, blocks: 2, next: &next)
            recorder.requestMarker(label: "here", source: "test")
            feed(recorder, blocks: 1, next: &next)
            recorder.finish()
            XCTAssertEqual(recorder.markers.map(\.frame), [128])
            XCTAssertEqual(recorder.markers.map(\.inFile), [false], "\(container)")
            XCTAssertEqual(recorder.markers.map(\.inSidecar), [true])
            let sidecar = try String(contentsOfFile: path + ".json", encoding: .utf8)
            XCTAssertTrue(sidecar.contains("\"label\" : \"here\""), sidecar)
            XCTAssertEqual(SF_INFOProbe.frames([path]), [192])
        }
    }

    /// A triggered recorder between takes has nowhere to put a marker: it says so.
    func testAMarkerOutsideATakeIsANote() throws {
        let path = directory.appendingPathComponent("take.wav").path
        let recorder = Recorder(path: path, settings: Recorder.Settings(sampleFormat: .int16, trigger: .request))
        try recorder.prepare(format: StreamFormat(sampleRate: 48000, channelCount: 1))
        var next: Float = 0
        recorder.requestMarker(label: "early", source: "test")
        feed(recorder, blocks: 2, next: &next)
        recorder.finish()
        XCTAssertEqual(recorder.markers, [])
        XCTAssertEqual(recorder.takeNotes(), ["marker \"early\" from test not placed: no take was open at its frame"])
    }

    func testCueChunkBytes() {
        let bytes = CueChunks.bytes([.init(frame: 0x0102_0304, label: "ab")])
        XCTAssertEqual(Array(bytes[0..<8]), Array("cue ".utf8) + [28, 0, 0, 0])
        XCTAssertEqual(Array(bytes[8..<12]), [1, 0, 0, 0], "one cue point")
        XCTAssertEqual(Array(bytes[12..<16]), [1, 0, 0, 0], "ID 1")
        XCTAssertEqual(Array(bytes[20..<24]), Array("data".utf8))
        XCTAssertEqual(Array(bytes[32..<36]), [4, 3, 2, 1], "sample offset, little-endian")
        XCTAssertEqual(Array(bytes[36..<40]), Array("LIST".utf8))
        // adtl + labl(8) + id(4) + "ab\0" (3) + pad = 4 + 8 + 8 = 20
        XCTAssertEqual(Array(bytes[40..<44]), [20, 0, 0, 0])
        XCTAssertEqual(Array(bytes[44..<48]), Array("adtl".utf8))
        XCTAssertEqual(Array(bytes[48..<56]), Array("labl".utf8) + [7, 0, 0, 0], "the label's size excludes its pad byte")
        XCTAssertEqual(Array(bytes[60...]), [UInt8(ascii: "a"), UInt8(ascii: "b"), 0, 0])
        XCTAssertEqual(CueChunks.sanitized(String(repeating: "é", count: 200)).utf8.count, 254, "cut on a character")
    }

    struct LibsndfileCue: Equatable {
        var frame: UInt32
        var label: String
        init(_ pair: (UInt32, String)) { (frame, label) = pair }
    }

    /// The cue points as libsndfile reads them (`SFC_GET_CUE`).
    private func libsndfileCues(_ path: String) -> [LibsndfileCue] {
        var info = SF_INFO()
        guard let file = sf_open(path, Int32(SFM_READ), &info) else { return [] }
        defer { sf_close(file) }
        var cues = SF_CUES()
        guard sf_command(file, Int32(SFC_GET_CUE), &cues, Int32(MemoryLayout<SF_CUES>.size)) == SF_TRUE else { return [] }
        return withUnsafeBytes(of: &cues.cue_points) { raw in
            let points = raw.bindMemory(to: SF_CUE_POINT.self)
            return (0..<Int(cues.cue_count)).map { index in
                var point = points[index]
                let name = withUnsafeBytes(of: &point.name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                return LibsndfileCue((point.sample_offset, name))
            }
        }
    }
}

/// This test's own reader of RIFF and RF64 files: walks the chunks and reads the `cue ` points
/// with their `labl` names, without libsndfile.
struct RIFFWalker {
    struct Cue: Equatable {
        var frame: UInt32
        var label: String
    }

    let form: String
    var cues: [Cue] = []
    /// Whether the RIFF size (RF64: the ds64 one) is the file's size less 8.
    var sizeMatchesFile = false

    init(path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) } }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) } }
        func name(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
        form = name(0)
        var riffSize = UInt64(u32(4))
        var dataSize: UInt64?
        if form == "RF64" {
            riffSize = u64(20)
            dataSize = u64(28)
        }
        sizeMatchesFile = riffSize == UInt64(bytes.count - 8)
        var offset = 12
        var points: [UInt32: UInt32] = [:]
        var order: [UInt32] = []
        var labels: [UInt32: String] = [:]
        while offset + 8 <= bytes.count {
            let id = name(offset)
            var size = UInt64(u32(offset + 4))
            if id == "data", let dataSize { size = dataSize }
            let body = offset + 8
            if id == "cue " {
                for index in 0..<Int(u32(body)) {
                    let point = body + 4 + index * 24
                    order.append(u32(point))
                    points[u32(point)] = u32(point + 20)
                }
            }
            if id == "LIST" && name(body) == "adtl" {
                var sub = body + 4
                while sub + 8 <= body + Int(size) {
                    let subSize = Int(u32(sub + 4))
                    if name(sub) == "labl" {
                        let text = bytes[(sub + 12)..<(sub + 8 + subSize)].prefix { $0 != 0 }
                        labels[u32(sub + 8)] = String(decoding: text, as: UTF8.self)
                    }
                    sub += 8 + subSize + subSize % 2
                }
            }
            offset = body + Int(size) + Int(size % 2)
        }
        cues = order.map { Cue(frame: points[$0]!, label: labels[$0] ?? "") }
    }
}

/// A Sony Wave64 file's cue points, walked by GUID (the W64 forms of `cue ` and `list`/`adtl`).
struct W64Walker {
    var cues: [RIFFWalker.Cue] = []

    init(path: String) throws {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        func u32(_ at: Int) -> UInt32 { (0..<4).reduce(0) { $0 | UInt32(bytes[at + $1]) << (8 * UInt32($1)) } }
        func u64(_ at: Int) -> Int { Int((0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * UInt64($1)) }) }
        func name(_ at: Int) -> String { String(decoding: bytes[at..<at + 4], as: UTF8.self) }
        XCTAssertEqual(name(0), "riff")
        XCTAssertEqual(u64(16), bytes.count, "the riff size is the file's")
        var offset = 40
        var points: [(UInt32, UInt32)] = []
        var labels: [UInt32: String] = [:]
        while offset + 24 <= bytes.count {
            let size = u64(offset + 16)
            let body = offset + 24
            if name(offset) == "cue " {
                for index in 0..<Int(u32(body)) { points.append((u32(body + 4 + index * 24), u32(body + 4 + index * 24 + 20))) }
            }
            if name(offset) == "list" && name(body) == "adtl" {
                var sub = body + 4
                while sub + 8 <= offset + size {
                    let length = Int(u32(sub + 4))
                    if name(sub) == "labl" {
                        labels[u32(sub + 8)] = String(decoding: bytes[(sub + 12)..<(sub + 8 + length)].prefix { $0 != 0 }, as: UTF8.self)
                    }
                    sub += 8 + length + (length & 1)
                }
            }
            guard size >= 24 else { break }
            offset += size + (8 - size % 8) % 8
        }
        cues = points.map { RIFFWalker.Cue(frame: $0.1, label: labels[$0.0] ?? "") }
    }
}
