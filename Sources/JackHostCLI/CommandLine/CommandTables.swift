import FoundationEssentials
import Glibc
import JackHostLiveView

/// Exit statuses of `jackhost`, documented in `--help` and the README.
public enum ExitStatus: Int32, Sendable {
    /// Everything worked.
    case success = 0
    /// A runtime failure: no server, a failed write, a plugin that failed later.
    case failure = 1
    /// A usage error: unknown option or subcommand, missing or invalid value.
    case usage = 2
    /// The JACK server went away during the run.
    case serverLost = 3
    /// The take is complete, but a plugin failed: it crashed, hung or overran its budget and
    /// was restarted, given up or bypassed. The summary names it.
    case pluginFailed = 4
    /// In a session (`NSM_URL`): the session manager refused jackhost or did not answer, sent
    /// an open jackhost cannot use, or the session's folder or settings could not be made or
    /// read. The manager was answered with `/error`.
    case session = 5
}

/// The version `jackhost --version` prints.
public let jackhostVersion = "0.1.0"

/// Option tables and help texts for every subcommand.
enum CommandTables {
    static let help = OptionSpec("help", short: "h", help: "show this help and exit")

    static let server: [OptionSpec] = [
        OptionSpec("server", short: "s", value: "NAME", help: "JACK server to use, 1-63 bytes (default: $JACK_DEFAULT_SERVER or \"default\")"),
        OptionSpec(
            "embedded-server", help: "for a demo or a test: start a private dummy jackd playing a test tone on each channel, and stop it at exit"),
    ]

    static let host: [OptionSpec] =
        server + [
            OptionSpec("name", short: "n", value: "CLIENT", help: "JACK client name, 1-63 bytes without ':' (default: jackhost)"),
            OptionSpec(
                "channels", short: "c", value: "N",
                help: "number of inputs, 1-1024 (default: the server's physical capture ports, or the --connect-stream ports)"),
            OptionSpec(
                "connect", value: "PATTERN", repeatable: true,
                help: "connect ports matching PATTERN (exact name or regex, see PATTERNS in `jackhost --help`) to in_1, in_2, ..."),
            OptionSpec(
                "connect-stream", value: "NAME", repeatable: true,
                help:
                    "connect the audio outputs of the JACK client named NAME (an AES67 stream's SDP session name under PipeWire), in port order; without -c, one input per port; inputs are named \"NAME FL\" (instead of --connect)"
            ),
            OptionSpec("no-auto-connect", help: "leave the inputs unconnected"),
            OptionSpec("duration", short: "d", value: "SECONDS", help: "stop after SECONDS of audio, 0.001 to 31536000 (default: until interrupted)"),
            OptionSpec("quiet", short: "q", help: "print no meters or summaries, only errors"),
            OptionSpec("reconnect", help: "after losing the server, wait for it and carry on (default for record and meter)"),
            OptionSpec("no-reconnect", help: "exit with status 3 when the server goes away (default for stream and run)"),
            OptionSpec("stop-on-xrun", help: "end the run at the first xrun, with status 1 (for takes that must be perfect)"),
            OptionSpec("callback-time", help: "time every process callback and print p50/p99/max in microseconds at exit"),
        ] + LiveViewSettings.table + OSCSettings.table + MIDIControlSettings.table + LoudnessSettings.table
        + AlarmSettings.table

    static let maxBuffer = OptionSpec(
        "max-buffer", value: "SIZE|DURATION",
        help: "memory a stalled disk or reader may fill before frames drop, 1M to 64G or 1s and up (default: 512M, 23 min of stereo float)")

    static let durability: [OptionSpec] = [
        OptionSpec(
            "sync-interval", value: "SECONDS",
            help: "flush data and header to stable storage every SECONDS of audio, 0 to 3600; 0 leaves it to the kernel (default: 2)"),
        OptionSpec("min-free", value: "SIZE", help: "end the take cleanly before the disk has less than SIZE free (e.g. 500M, 2G)"),
    ]

    /// `--on-file-open`, `--on-file-close`, `--on-rotate`: see ``HookCommand``.
    static let hooks: [OptionSpec] = [
        OptionSpec("on-file-open", value: "CMD", help: "run CMD PATH when a file is created (CMD is split at spaces; no shell)"),
        OptionSpec("on-file-close", value: "CMD", help: "run CMD PATH FRAMES XRUNS DROPS when a file is finalised"),
        OptionSpec("on-rotate", value: "CMD", help: "with --split: run CMD CLOSED_PATH NEW_PATH when a segment ends and the next begins"),
    ]

    static let quality = OptionSpec(
        "quality", value: "Q",
        help: "encoder quality for ogg, opus and mp3, 0 (smallest file) to 1 (best sound), e.g. 0.6 (default: libsndfile's)")

    static let overwrite = OptionSpec(
        "overwrite", help: "replace existing files (a take, its numbered segments, a --output file); refused without it")

    static let recordOptions: [OptionSpec] =
        [
            OptionSpec(
                "format", short: "f", value: "CONTAINER",
                help:
                    "what this machine's libsndfile writes: \(CapturePlan.writableList(dots: false)) (default: from the file's extension, which must agree)"
            ),
            OptionSpec("sample-format", short: "b", value: "FMT", help: "f32, s32, s24 or s16 (default: f32; flac: s24; ogg, opus, mp3: f32 only)"),
            quality,
            OptionSpec(
                "split", value: "SIZE|DURATION",
                help: "start a new numbered file every SIZE (64K to 1024T, e.g. 2G, 500M) or DURATION (1s to 8760h, e.g. 30s, 10m, 1h)"),
            overwrite,
            maxBuffer,
        ] + durability + hooks + TakeOptions.table

    static let streamOptions: [OptionSpec] = [
        OptionSpec("sample-format", short: "b", value: "FMT", help: "f32, s32, s24, s16 or 8.24 (default: f32)"),
        OptionSpec("interleaved", short: "i", help: "write frames interleaved (L R L R ...); default is one block per channel"),
        OptionSpec("output", short: "o", value: "PATH", help: "write to a FIFO (waits for its reader) or a new file instead of stdout"),
        overwrite,
        maxBuffer,
    ]

    static let info: [OptionSpec] =
        server + [
            OptionSpec(
                "json",
                help:
                    "print JSON with the keys sampleRate, bufferFrames, ioBufferDuration, inputNumberOfChannels, inputLatencyFrames, capturePorts, and streams (each JACK client with audio outputs: name, ports, channels, physical)"
            ),
            help,
        ]
    static let record: [OptionSpec] =
        host + recordOptions + [
            OptionSpec("meter", help: "show meters even when stdout is not a terminal"),
            OptionSpec("no-meter", help: "do not show meters"),
            help,
        ]
    static let meter: [OptionSpec] =
        host + [
            OptionSpec(
                "interval", value: "SECONDS", help: "seconds between plain meter lines when stdout is not a terminal, 0.05 to 3600 (default: 1)"),
            help,
        ]
    static let stream: [OptionSpec] = host + streamOptions + [help]
    static let run: [OptionSpec] =
        host + [
            OptionSpec("record", short: "r", value: "FILE", help: "record to FILE"),
            OptionSpec("format", short: "f", value: "CONTAINER", help: "container for --record (see `jackhost record --help`)"),
            OptionSpec("record-sample-format", value: "FMT", help: "sample format for --record: f32, s32, s24 or s16"),
            quality,
            OptionSpec("split", value: "SIZE|DURATION", help: "split --record files by size or duration"),
        ] + TakeOptions.table + [
            OptionSpec("meter", short: "m", help: "show meters and print a summary at exit"),
            OptionSpec("stream", help: "stream raw audio to stdout (or --output)"),
            OptionSpec("output", short: "o", value: "PATH", help: "with --stream: write to a FIFO or file instead of stdout"),
            OptionSpec("sample-format", value: "FMT", help: "with --stream: f32, s32, s24, s16 or 8.24"),
            OptionSpec("interleaved", short: "i", help: "with --stream: interleave frames"),
            overwrite,
            maxBuffer,
        ] + durability + hooks + [
            OptionSpec(
                "plugin", short: "p", value: "PATH[:key=value,...]", repeatable: true,
                help: "load a plugin (.so) as a consumer, with options; repeatable (see `jackhost plugin --help`)"),
            OptionSpec(
                "plugin-isolation", value: "MODE",
                help:
                    "process: each plugin runs in its own process as its own JACK client, so a crash or hang cannot touch the take; none: in jackhost's process (default: process beside --record, else none)"
            ),
            OptionSpec(
                "results", value: "FILE",
                help: "write the plugins' published results and the take's markers to FILE as JSON lines, once a second and at the end"),
            OptionSpec("supervisor-fd", value: "N", hidden: true, help: "(internal) the link to the jackhost that isolates this plugin"),
            help,
        ]

    /// The "Exit status:" block, from ``CommandCatalog/meaning(of:)``.
    static var exitStatuses: String { CommandCatalog.exitStatusHelp }

    static let overview = """
        jackhost \(jackhostVersion): capture multichannel audio from JACK and hand it to consumers.

        Usage: jackhost COMMAND [OPTIONS]

        Commands:
          info            print the session: sample rate, period, capture channels and ports, streams
          record [FILE]   record every input to FILE (WAV, RF64, W64, CAF, FLAC, Ogg Vorbis, Opus or
                          MP3; without FILE, a new jackhost-YYYYMMDD-HHMMSS.wav named when the
                          first audio arrives)
          meter           show peak/RMS meters; print a summary at exit
          stream          write raw samples to stdout or a FIFO
          run             combine consumers: --record FILE, --meter, --stream, --plugin PATH
          signal          play test tones, a sine or a bit-exact test sequence into JACK
          plugin          inspect a plugin (plugin inspect PATH) or start one (plugin new NAME)
          completions     print the bash, zsh or fish completions (`jackhost help --man`: this as a man page)

        Run `jackhost COMMAND --help` for a command's options. `jackhost --version` prints the version.

        Audio is real or jackhost fails: with no JACK server running, every command exits with
        status 1 and says how to start one (jackd, qjackctl, or `pw-jack jackhost ...` under
        PipeWire). A private dummy server with test tones runs only with --embedded-server.

        Files: a take, its numbered segments (take-0002.wav) and a --output file are never
        overwritten: an existing one is refused (status 2) unless --overwrite is given. The
        container comes from --format or the extension (.wav .rf64 .w64 .caf .flac .ogg .opus
        .mp3; `jackhost record --help` lists what this machine writes), which must agree.

        PATTERNS (--connect): an exact port name, or a POSIX extended regular expression matched
        against full port names (client:port) as JACK does, e.g. 'system:capture_[1-8]' or
        'Firefox:output_F[LR]'. Back-references (\\1) and repetitions that expand past 10000 atoms
        are refused, so matching cannot hang. A pattern matches anywhere in a name: 'system:capture_1'
        also matches capture_10; anchor it as '^system:capture_1$'.

        Signals: SIGINT, SIGTERM and SIGHUP stop a command within a second and finalise its files;
        queued audio is drained for at most 0.5 s after a signal (5 s after --duration ends), and
        what is given up is reported by consumer. SIGUSR1 prints a progress line on stderr.

        \(CommandCatalog.environmentHelp)

        \(exitStatuses)
        """

    static func usage(_ command: String, synopsis: String, summary: String, options: [OptionSpec]) -> String {
        """
        Usage: jackhost \(command) \(synopsis)

        \(summary)

        Options:
        \(helpText(for: options))

        \(exitStatuses)
        """
    }
}
