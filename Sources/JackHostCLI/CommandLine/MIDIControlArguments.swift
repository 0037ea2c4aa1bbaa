// MIDIControlArguments.swift
//
// `--midi-control`, `--mmc-id ID` and `--midi-marker note:N|cc:N` on the command line: the
// options' table entries and their parsing into MIDIControlSettings. Checked before JACK is
// touched, so a mistake is a usage error (status 2).

/// What `--midi-control` listens for on `CLIENT:control`.
struct MIDIControlSettings: Equatable {
    /// A note or a controller that drops a marker.
    enum MarkerTrigger: Equatable, CustomStringConvertible {
        /// A note-on of this note (velocity above 0), on any channel.
        case note(UInt8)
        /// This controller rising to 64 or more, on any channel.
        case controller(UInt8)

        var description: String {
            switch self {
            case .note(let number): "note \(number)"
            case .controller(let number): "CC \(number)"
            }
        }
    }

    /// The MMC device ID answered besides 127 (all devices), from `--mmc-id`.
    var deviceID: UInt8?
    /// `--midi-marker`, when given.
    var marker: MarkerTrigger?

    /// The options both capture commands' tables add.
    static let table: [OptionSpec] = [
        OptionSpec(
            "midi-control",
            help:
                "register a JACK MIDI input CLIENT:control: MIDI Machine Control Record Strobe and Play start a take, Stop, Pause and Record Exit stop it (with record --signal-trigger, and over an automatic trigger: the last explicit command wins), at the event's own frame (the recorder runs 0.25 s behind capture for it); connect a controller to it with jack_connect or a patchbay"
        ),
        OptionSpec(
            "mmc-id", value: "ID", help: "with --midi-control: also answer MMC sent to device ID 0-126 (127, all devices, is always answered)"),
        OptionSpec(
            "midi-marker", value: "note:N|cc:N",
            help: "with --midi-control: a note-on of note N, or controller N rising to 64 or more, drops a marker at its frame (N 0-127, any channel)"
        ),
    ]

    /// Reads the three options; nil without `--midi-control`.
    static func parse(_ parsed: ParsedArguments) throws(UsageError) -> MIDIControlSettings? {
        guard parsed.has("midi-control") else {
            for option in ["mmc-id", "midi-marker"] where parsed.value(option) != nil {
                throw UsageError("--\(option) needs --midi-control: it acts on the events of CLIENT:control")
            }
            return nil
        }
        var settings = MIDIControlSettings()
        if let text = parsed.value("mmc-id") {
            settings.deviceID = UInt8(try ValueParsing.wholeNumber(text, option: "mmc-id", range: 0...126))
        }
        if let text = parsed.value("midi-marker") { settings.marker = try marker(text) }
        return settings
    }

    /// `note:N` or `cc:N`, N 0-127.
    static func marker(_ text: String) throws(UsageError) -> MarkerTrigger {
        let parts = text.lowercased().split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, ["note", "cc"].contains(parts[0]) else {
            throw UsageError("--midi-marker \(ValueParsing.shown(text)): give note:N or cc:N, N from 0 to 127 (e.g. note:60 or cc:64)")
        }
        let number = UInt8(try ValueParsing.wholeNumber(parts[1], option: "midi-marker", range: 0...127))
        return parts[0] == "note" ? .note(number) : .controller(number)
    }
}
