import JackHost
import XCTest

@testable import JackHostCLI

/// `--midi-control` without JACK: which MIDI messages become which commands, and the options.
final class MIDIControlParsingTests: XCTestCase {
    private func source(_ settings: MIDIControlSettings = .init()) -> MIDISource {
        MIDISource(queue: MIDIControlQueue(), settings: settings, quiet: true)
    }

    func testMachineControlToAllDevicesOrToOurIDStartsAndStops() {
        let midi = source()
        XCTAssertEqual(midi.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x06, 0xF7]), .start(origin: "MMC record strobe"))
        XCTAssertEqual(midi.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x02, 0xF7]), .start(origin: "MMC play"))
        XCTAssertEqual(midi.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x03, 0xF7]), .start(origin: "MMC play"), "deferred play")
        XCTAssertEqual(midi.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x01, 0xF7]), .stop(origin: "MMC stop"))
        XCTAssertEqual(midi.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x07, 0xF7]), .stop(origin: "MMC record exit"))
        XCTAssertEqual(midi.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x09, 0xF7]), .stop(origin: "MMC pause"))
        XCTAssertNil(midi.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x04, 0xF7]), "fast forward means nothing here")
        XCTAssertNil(midi.command(for: [0xF0, 0x7F, 0x05, 0x06, 0x06, 0xF7]), "device 5 is not ours without --mmc-id 5")
        XCTAssertNil(midi.command(for: [0xF0, 0x7E, 0x7F, 0x06, 0x06, 0xF7]), "non-real-time universal sysex")
        XCTAssertNil(midi.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x06]), "cut short")
        let five = source(.init(deviceID: 5))
        XCTAssertEqual(five.command(for: [0xF0, 0x7F, 0x05, 0x06, 0x06, 0xF7]), .start(origin: "MMC record strobe"))
        XCTAssertEqual(five.command(for: [0xF0, 0x7F, 0x7F, 0x06, 0x01, 0xF7]), .stop(origin: "MMC stop"), "127 is every device")
    }

    func testANoteOrARisingControllerMarks() {
        let note = source(.init(marker: .note(60)))
        XCTAssertEqual(note.command(for: [0x93, 60, 100]), .marker(label: "", origin: "MIDI note 60"), "any channel")
        XCTAssertNil(note.command(for: [0x90, 60, 0]), "velocity 0 is a note-off")
        XCTAssertNil(note.command(for: [0x80, 60, 64]))
        XCTAssertNil(note.command(for: [0x90, 61, 100]))
        let pedal = source(.init(marker: .controller(64)))
        XCTAssertEqual(pedal.command(for: [0xB0, 64, 127]), .marker(label: "", origin: "MIDI CC 64"))
        XCTAssertNil(pedal.command(for: [0xB0, 64, 100]), "still held: one marker per press")
        XCTAssertNil(pedal.command(for: [0xB0, 64, 0]))
        XCTAssertEqual(pedal.command(for: [0xB0, 64, 64]), .marker(label: "", origin: "MIDI CC 64"), "pressed again")
        XCTAssertNil(source().command(for: [0x90, 60, 100]), "no --midi-marker: notes mean nothing")
    }

    func testOptions() throws {
        func parse(_ arguments: [String]) throws -> MIDIControlSettings? {
            try MIDIControlSettings.parse(parseArguments(arguments, options: MIDIControlSettings.table, command: "record"))
        }
        XCTAssertNil(try parse([]))
        XCTAssertEqual(try parse(["--midi-control"]), .init())
        XCTAssertEqual(try parse(["--midi-control", "--mmc-id", "16", "--midi-marker", "CC:64"]), .init(deviceID: 16, marker: .controller(64)))
        XCTAssertEqual(try parse(["--midi-control", "--midi-marker", "note:0"])?.marker, .note(0))
        XCTAssertThrowsError(try parse(["--midi-marker", "note:60"]))
        XCTAssertThrowsError(try parse(["--midi-control", "--midi-marker", "note:128"]))
        XCTAssertThrowsError(try parse(["--midi-control", "--mmc-id", "127"]))
    }
}
