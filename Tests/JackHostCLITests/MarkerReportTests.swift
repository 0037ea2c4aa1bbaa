import JackHostConsumers
import XCTest

@testable import JackHostCLI

/// The keys a terminal sends and the lines that tell the user where the markers went.
final class MarkerReportTests: XCTestCase {
    func testKeysBecomeCommandsAndOthersAreIgnored() {
        XCTAssertEqual(
            KeyboardSource.commands(for: Array("xmR\u{1B}[Aq".utf8)),
            [.marker(label: "", origin: "keyboard"), .rotate(origin: "keyboard")])
        XCTAssertEqual(KeyboardSource.commands(for: [UInt8]()), [])
    }

    func testTheLinesSayWhereEachMarkerIsKept() {
        func marker(_ file: String, inFile: Bool, inSidecar: Bool) -> TakeMarker {
            TakeMarker(label: "verse", source: "keyboard", file: file, frame: 96000, unixTime: 0, inFile: inFile, inSidecar: inSidecar)
        }
        XCTAssertEqual(
            TakeNotesReport.describe(marker("take.wav", inFile: true, inSidecar: false), sampleRate: 48000),
            "marker \"verse\" (keyboard) at 2.000 s, frame 96000 of take.wav")
        XCTAssertEqual(
            TakeNotesReport.describe(marker("take.flac", inFile: false, inSidecar: true), sampleRate: 48000),
            "marker \"verse\" (keyboard) at 2.000 s, frame 96000 of take.flac (in the sidecar only)")
        XCTAssertTrue(
            TakeNotesReport.describe(marker("take.flac", inFile: false, inSidecar: false), sampleRate: 48000)
                .hasSuffix("(kept in no file: this container has no cue chunk; --sidecar keeps markers)"))
        XCTAssertNil(TakeSummary.markerLine([]))
        XCTAssertEqual(
            TakeSummary.markerLine([
                marker("a.wav", inFile: true, inSidecar: false), marker("a.wav", inFile: true, inSidecar: false),
                marker("a-0002.wav", inFile: true, inSidecar: false),
            ]),
            "markers: 3 (2 in a.wav, 1 in a-0002.wav), in the files' cue chunks\n")
        XCTAssertEqual(
            TakeSummary.markerLine([marker("a.flac", inFile: false, inSidecar: false)]),
            "markers: 1 (1 in a.flac), 1 in no file (no cue chunk in this container; --sidecar keeps them)\n")
    }
}
