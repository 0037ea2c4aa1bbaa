import FoundationEssentials
import Glibc
import JackHost
import JackHostPlugins

/// `jackhost plugin inspect PATH` and `jackhost plugin new NAME`: look inside a plugin, or
/// start writing one.
enum PluginCommand {
    static let inspectOptions: [OptionSpec] = [CommandTables.help]
    static let newOptions: [OptionSpec] = [
        OptionSpec("directory", short: "C", value: "DIR", help: "create the package in DIR/NAME (default: the current directory)"),
        OptionSpec(
            "mode", value: "realtime|deferred",
            help: "realtime: process() in JACK's callback; deferred: consume() on a worker thread (default: realtime)"),
        OptionSpec(
            "jackhost-path", value: "DIR",
            help: "the JackHost SDK the package depends on: an installed swift-sdk directory or a checkout "
                + "(default: the installed SDK beside this jackhost, else the checkout it runs from)"),
        CommandTables.help,
    ]

    static let overview = """
        Usage: jackhost plugin inspect PATH
               jackhost plugin new NAME [--directory DIR] [--mode realtime|deferred]

        inspect  print a plugin's name, version, ABI version (1 or 2), mode, options, and (ABI 2) its
                 results, events and block shape; creates no instance, but loading runs the library's
                 constructors, so inspect only files you trust
        new      write a ready-to-build plugin package NAME (SwiftPM, a .dynamic library)

        Load plugins with `jackhost run --plugin PATH[:key=value,...]`. Besides the plugin's own options,
        the host takes block-frames=N, sample-rate=HZ and channels=LIST (e.g. 1-2) to shape the blocks
        (a real-time plugin takes channels only). Beside --record a plugin runs in its own
        process (--plugin-isolation process): a crash or hang is reported and the plugin restarted,
        and the take is untouched (exit status 4 says a plugin failed). --results FILE writes what
        plugins publish as JSON lines. The plugin guide is docs/PLUGINS.md.

        \(CommandTables.exitStatuses)
        """

    static func run(_ arguments: [String]) throws -> ExitStatus {
        guard let subcommand = arguments.first else {
            throw UsageError("plugin needs a subcommand: inspect PATH or new NAME (see `jackhost plugin --help`)")
        }
        let rest = Array(arguments.dropFirst())
        switch subcommand {
        case "--help", "-h", "help":
            print(overview)
            return .success
        case "inspect":
            return try inspect(rest)
        case "new":
            return try create(rest)
        default:
            throw UsageError("unknown plugin subcommand \"\(subcommand)\"; use inspect or new (see `jackhost plugin --help`)")
        }
    }

    // MARK: inspect

    private static func inspect(_ arguments: [String]) throws -> ExitStatus {
        let parsed = try parseArguments(arguments, options: inspectOptions, command: "plugin inspect")
        if parsed.has("help") {
            print(CommandCatalog.pluginInspect.usage)
            return .success
        }
        guard parsed.positionals.count == 1, let path = parsed.positionals.first else {
            throw UsageError("plugin inspect takes one PATH, e.g. `jackhost plugin inspect ./libPeak.so`")
        }
        do {
            print(try PluginLibrary.open(path: path).inspectionText)
        } catch {
            // A path that is not there is the user's mistake (status 2); a broken plugin is a failure (status 1).
            if error.isUsageError { throw UsageError(error.description) }
            throw error
        }
        return .success
    }

    // MARK: new

    private static func create(_ arguments: [String]) throws -> ExitStatus {
        let parsed = try parseArguments(arguments, options: newOptions, command: "plugin new")
        if parsed.has("help") {
            print(CommandCatalog.pluginNew.usage)
            return .success
        }
        guard parsed.positionals.count == 1, let name = parsed.positionals.first else {
            throw UsageError("plugin new takes one NAME, e.g. `jackhost plugin new PeakHold`")
        }
        try PluginTemplate.validate(name: name)
        let mode: PluginDeliveryMode
        switch parsed.value("mode") ?? "realtime" {
        case "realtime": mode = .realtime
        case "deferred": mode = .deferred
        case let other: throw UsageError("--mode \(other) is not a mode; use realtime or deferred")
        }
        let jackhost: URL
        if let given = parsed.value("jackhost-path") {
            jackhost = URL(fileURLWithPath: given).standardizedFileURL
            guard PluginSDKLocation.isSDK(jackhost) else {
                throw UsageError(
                    "no JackHost SDK at \(jackhost.path); pass --jackhost-path DIR, the directory with its Package.swift "
                        + "(\(PluginSDKLocation.installedSuffix) of an installation, or a JackHost checkout)")
            }
        } else {
            guard let found = PluginSDKLocation.find() else {
                throw UsageError(
                    "no JackHost Swift SDK found: this jackhost (\(PluginSDKLocation.executable?.path ?? "?")) has no "
                        + "\(PluginSDKLocation.installedSuffix) beside it (install jackhost-dev) and does not run from a "
                        + "checkout; pass --jackhost-path DIR")
            }
            jackhost = found
        }
        let parent = URL(fileURLWithPath: parsed.value("directory") ?? FileManager.default.currentDirectoryPath)
        guard FileKind(atPath: parent.path) == .directory else {
            throw UsageError("--directory \(parent.path) is not a directory; create it first")
        }
        let root = parent.appendingPathComponent(name).standardizedFileURL
        if FileManager.default.fileExists(atPath: root.path) {
            throw UsageError("\(root.path) already exists; choose another NAME or --directory")
        }
        let files = PluginTemplate.files(
            name: name, mode: mode, jackhostPath: jackhost.path, swiftVersion: PluginTemplate.requiredSwiftVersion)
        do {
            for (relativePath, contents) in files {
                let url = root.appendingPathComponent(relativePath)
                try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
                try contents.write(to: url, atomically: true, encoding: .utf8)
            }
        } catch {
            throw UsageError("cannot write \(root.path): \(error)")
        }
        print(
            """
            created \(root.path): a \(mode.rawValue) plugin package depending on \(jackhost.path)
            (built with Swift \(PluginTemplate.requiredSwiftVersion), the version this jackhost runs on)
            next:
              cd \(root.path)
              swift build                                   # makes .build/debug/lib\(name).so
              swift test                                    # runs its tests without JACK
              jackhost plugin inspect .build/debug/lib\(name).so
              jackhost run --plugin .build/debug/lib\(name).so --meter -d 5
            """)
        return .success
    }
}

/// The files of a new plugin package. They are kept here, in the binary, so `jackhost plugin
/// new` works from any directory; the integration tests build what it writes.
enum PluginTemplate {
    /// The Swift version a plugin for this jackhost must be built with: the compiler that built
    /// jackhost, whose runtime it runs on.
    static var requiredSwiftVersion: String { PluginLibrary.hostSwiftVersion }

    /// Names that would collide with the modules a plugin package depends on.
    static let reservedNames: Set<String> = [
        "JackHost", "JackHostTypes", "JackHostPluginSDK", "JackHostPluginTesting", "JackHostPlugins", "JackHostConsumers",
        "JackHostCLI", "CJackHostPlugin", "CJack", "CSndFile", "CSignals",
        "Foundation", "FoundationEssentials", "Glibc", "Swift", "XCTest",
    ]

    /// Accepts names usable as a Swift type, module and package: a letter, then letters, digits or '_'.
    static func validate(name: String) throws(UsageError) {
        guard let first = name.first, first.isASCII, first.isLetter,
            name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") })
        else {
            throw UsageError("plugin name \"\(name)\" is not usable; use a letter, then letters, digits or '_' (e.g. PeakHold)")
        }
        guard !reservedNames.contains(name) else {
            throw UsageError("plugin name \"\(name)\" clashes with a module the plugin depends on; choose another")
        }
    }

    /// Relative path and contents of every file in the package.
    static func files(name: String, mode: PluginDeliveryMode, jackhostPath: String, swiftVersion: String) -> [(String, String)] {
        [
            ("Package.swift", manifest(name: name, jackhostPath: jackhostPath, swiftVersion: swiftVersion)),
            ("Sources/\(name)/\(name).swift", mode == .realtime ? realtimeSource(name: name) : deferredSource(name: name)),
            ("Sources/\(name)/Export.swift", exportSource(name: name)),
            ("Tests/\(name)Tests/\(name)Tests.swift", testSource(name: name)),
            ("README.md", readme(name: name, mode: mode, jackhostPath: jackhostPath, swiftVersion: swiftVersion)),
            (".gitignore", ".build/\n.swiftpm/\n"),
        ]
    }

    /// Whether `version` is MAJOR.MINOR.PATCH (the compiler check needs one).
    static func isExactVersion(_ version: String) -> Bool {
        let parts = version.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 3 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// The next patch version ("6.3.1" gives "6.3.2"), for the manifest's `#if compiler(...)`.
    private static func nextPatch(_ version: String) -> String {
        let parts = version.split(separator: ".")
        return "\(parts[0]).\(parts[1]).\((Int(parts[2]) ?? 0) + 1)"
    }

    private static func manifest(name: String, jackhostPath: String, swiftVersion: String) -> String {
        // The tools version: the required compiler's, at least 6.3 (Export.swift uses @c).
        let exact = isExactVersion(swiftVersion)
        let atLeast63 = exact && swiftVersion.split(separator: ".").compactMap { Int($0) }.lexicographicallyPrecedes([6, 3]) == false
        let tools = atLeast63 ? swiftVersion : "6.3"
        let check =
            exact
            ? #"""

            // The Swift version: jackhost runs on the Swift \#(swiftVersion) runtime and refuses a plugin built
            // by another compiler (Swift has no stable ABI on Linux), so this package builds with \#(swiftVersion) only.
            #if !compiler(>=\#(swiftVersion)) || compiler(>=\#(nextPatch(swiftVersion)))
                #error("this plugin must be built with Swift \#(swiftVersion), the version jackhost runs on; `swift --version` names yours")
            #endif

            """#
            : ""
        return #"""
            // swift-tools-version:\#(tools)
            // \#(name): a JackHost plugin. `swift build` makes .build/debug/lib\#(name).so;
            // load it with `jackhost run --plugin .build/debug/lib\#(name).so`.
            // Requires Swift \#(swiftVersion): the version of the jackhost it was generated for (and at least 6.3:
            // Export.swift uses the @c attribute, new in Swift 6.3).
            import PackageDescription
            \#(check)
            """# + manifestBody(name: name, jackhostPath: jackhostPath)
    }

    private static func manifestBody(name: String, jackhostPath: String) -> String {
        #"""

        let package = Package(
            name: "\#(name)",
            products: [
                // .dynamic: a shared object jackhost can dlopen.
                .library(name: "\#(name)", type: .dynamic, targets: ["\#(name)"]),
            ],
            dependencies: [
                // The JackHost Swift SDK (JackHostPluginSDK, JackHostPluginTesting): an installed one
                // (jackhost-dev: /usr/share/jackhost/swift-sdk) or a JackHost checkout.
                .package(name: "JackHost", path: "\#(jackhostPath)"),
            ],
            targets: [
                // The plugin links the slim SDK only: no libjack, no libsndfile, no Foundation.
                .target(name: "\#(name)", dependencies: [.product(name: "JackHostPluginSDK", package: "JackHost")]),
                // Its tests drive it without JACK, through JackHostPluginTesting.
                .testTarget(name: "\#(name)Tests",
                            dependencies: ["\#(name)", .product(name: "JackHostPluginTesting", package: "JackHost")]),
            ],
            swiftLanguageModes: [.v6]
        )

        """#
    }

    private static func realtimeSource(name: String) -> String {
        #"""
        import Glibc  // log10; the plugin imports no Foundation, so it links none
        import JackHostPluginSDK

        /// A real-time JackHost plugin. As generated, it measures the RMS level of every input,
        /// publishes the loudest channel's as the result `rms.max` (jackhost shows it in the meter
        /// and the summary, and writes it with `--results FILE`), and writes one line per channel
        /// at the end of the run: `\#(name) in_1 rms -3.01 dBFS`.
        public final class \#(name): RealtimePlugin {
            /// The name jackhost shows.
            public static let name = "\#(name)"
            /// Your plugin's version.
            public static let version = "0.1.0"
            /// Options users give as `--plugin lib\#(name).so:output=PATH`.
            public static let options: [PluginOption] = [.output]
            /// The values this plugin publishes while it runs.
            public static let results = [PluginResult("rms.max", unit: "dBFS", help: "the loudest channel's RMS so far")]

            private let output: PluginOutput
            private let loudest: PluginResultHandle
            /// Per-channel sums of squares, allocated in prepare(): process() must never allocate.
            private var sums = UnsafeMutableBufferPointer<Double>(start: nil, count: 0)
            private var frames = 0

            /// Reads the options and takes the host's services. Throw to refuse the options: the
            /// message reaches the user (throw PluginUsageError when the user's value is at fault).
            public init(options: PluginOptions, host: PluginHost) throws {
                output = try PluginOutput(path: options.string("output"))
                loudest = host.result("rms.max")
            }

            /// Without a host (tests, embedding): results go nowhere.
            public convenience init(options: PluginOptions) throws { try self.init(options: options, host: .none) }

            deinit { sums.deallocate() }

            /// Ordinary thread, before the first block: allocate everything process() needs.
            public func prepare(format: StreamFormat) throws {
                sums.deallocate()
                sums = .allocate(capacity: format.channelCount)
                sums.initialize(repeating: 0)
                frames = 0
            }

            /// **Real-time thread.** No allocation, locks, I/O or print here (see docs/PLUGINS.md).
            public func process(_ block: AudioBlock) {
                for channel in 0..<min(block.channelCount, sums.count) {
                    let samples = block.buffers[channel]
                    var sum = 0.0
                    for index in 0..<samples.count { sum += Double(samples[index]) * Double(samples[index]) }
                    sums[channel] += sum
                }
                frames += block.frameCount
                var largest = 0.0
                for channel in 0..<sums.count { largest = max(largest, sums[channel]) }
                if frames > 0 && largest > 0 { loudest.publish(20 * log10((largest / Double(frames)).squareRoot())) }  // one atomic store
            }

            /// Ordinary thread, after the last block: report.
            public func finish() {
                for channel in 0..<sums.count {
                    let rms = frames > 0 ? (sums[channel] / Double(frames)).squareRoot() : 0
                    output.write(line: "\#(name) in_\(channel + 1) rms \(PluginOutput.decimal(20 * log10(rms), places: 2)) dBFS")
                }
            }
        }

        """#
    }

    private static func deferredSource(name: String) -> String {
        #"""
        import Glibc  // log10; the plugin imports no Foundation, so it links none
        import JackHostPluginSDK

        /// A deferred JackHost plugin: consume() runs on its own worker thread, so it may allocate,
        /// lock and do I/O. As generated, it measures the RMS level of every input and writes one line
        /// per channel at the end of the run: `\#(name) in_1 rms -3.01 dBFS dropped 0`.
        public final class \#(name): DeferredPlugin {
            /// The name jackhost shows.
            public static let name = "\#(name)"
            /// Your plugin's version.
            public static let version = "0.1.0"
            /// Options users give as `--plugin lib\#(name).so:output=PATH`.
            public static let options: [PluginOption] = [.output]

            private let output: PluginOutput
            private var sums: [Double] = []
            private var frames = 0
            private var dropped = 0

            /// Reads the options. Throw to refuse them: the message reaches the user.
            public init(options: PluginOptions) throws {
                output = try PluginOutput(path: options.string("output"))
            }

            /// Ordinary thread, before the first block.
            public func prepare(format: StreamFormat) throws {
                sums = Array(repeating: 0, count: format.channelCount)
                frames = 0
                dropped = 0
            }

            /// Worker thread. If the worker fell behind, the host dropped whole blocks for this
            /// plugin only; `droppedFramesBefore` says how many frames are missing before this one.
            public func consume(_ block: AudioBlock) {
                dropped += block.droppedFramesBefore
                for channel in 0..<min(block.channelCount, sums.count) {
                    for sample in block.buffers[channel] { sums[channel] += Double(sample) * Double(sample) }
                }
                frames += block.frameCount
            }

            /// Ordinary thread, after the last block: report.
            public func finish() {
                for (channel, sum) in sums.enumerated() {
                    let rms = frames > 0 ? (sum / Double(frames)).squareRoot() : 0
                    output.write(line: "\#(name) in_\(channel + 1) rms \(PluginOutput.decimal(20 * log10(rms), places: 2)) dBFS dropped \(dropped)")
                }
            }
        }

        """#
    }

    private static func exportSource(name: String) -> String {
        #"""
        import JackHostPluginSDK

        /// The plugin's one exported C symbol: jackhost finds it with dlsym and reads the descriptor.
        @c(jackhost_plugin_descriptor)
        public func jackhostPluginDescriptor() -> UnsafeRawPointer { exportPlugin(\#(name).self) }

        """#
    }

    private static func testSource(name: String) -> String {
        #"""
        import FoundationEssentials
        import JackHostPluginSDK
        import JackHostPluginTesting
        import XCTest
        @testable import \#(name)

        /// Drives the plugin as jackhost would (prepare, blocks, finish), without JACK.
        final class \#(name)Tests: XCTestCase {
            func testFullScaleSineIsMinus3dBFS() throws {
                let path = FileManager.default.temporaryDirectory.appendingPathComponent("\#(name)-\(UUID().uuidString).txt").path
                defer { try? FileManager.default.removeItem(atPath: path) }
                let plugin = try \#(name).make(options: ["output": path])
                let sine = PluginTestAudio.sine(frequency: 1000, amplitude: 1, frames: 48000)
                try PluginTestDriver(blockFrames: 256).run(plugin, channels: [sine, sine])
                let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
                XCTAssertEqual(lines.count, 2)
                XCTAssertTrue(lines[0].hasPrefix("\#(name) in_1 rms -3.01 dBFS"), String(lines[0]))
            }

            func testUnknownOptionsAreRefused() {
                XCTAssertThrowsError(try \#(name).make(options: ["no-such-option": "1"]))
            }
        }

        """#
    }

    private static func readme(name: String, mode: PluginDeliveryMode, jackhostPath: String, swiftVersion: String) -> String {
        #"""
        # \#(name)

        A \#(mode.rawValue) JackHost plugin, generated by `jackhost plugin new`.

        ```sh
        swift build                                          # .build/debug/lib\#(name).so
        swift test                                           # drives it without JACK
        jackhost plugin inspect .build/debug/lib\#(name).so
        jackhost run --plugin .build/debug/lib\#(name).so:output=levels.txt -d 5
        ```

        Edit `Sources/\#(name)/\#(name).swift`. The rules (what the real-time thread forbids, how
        options and errors work, the ABI) are in docs/PLUGINS.md of JackHost.

        ## The SDK and the Swift version

        The package gets `JackHostPluginSDK` and `JackHostPluginTesting` from the JackHost Swift SDK at

            \#(jackhostPath)

        (the `.package(name: "JackHost", path: ...)` line in `Package.swift`). To use another one, change
        that path: an installed SDK (`/usr/share/jackhost/swift-sdk`, from the jackhost-dev package) or a
        JackHost checkout (the directory with its `Package.swift`); or regenerate the package with
        `jackhost plugin new \#(name) --jackhost-path DIR`.

        Build it with Swift \#(swiftVersion), the version the jackhost that generated it runs on: Swift
        has no stable ABI on Linux, so jackhost refuses a plugin built by another compiler version, and
        `Package.swift` stops a build with any other (`swift --version` names yours).

        """#
    }
}

/// Where `jackhost plugin new` finds the Swift SDK when not given --jackhost-path: relative to the
/// running binary, never from where it was built.
enum PluginSDKLocation {
    /// Where an installation keeps the SDK, relative to the prefix the binary is in (`PREFIX/bin`).
    static let installedSuffix = "share/jackhost/swift-sdk"

    /// The running executable, symbolic links resolved.
    static var executable: URL? {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")).map { URL(fileURLWithPath: $0) }
    }

    /// Whether `directory` holds a package that provides JackHostPluginSDK (an SDK or a checkout).
    static func isSDK(_ directory: URL) -> Bool {
        guard let manifest = try? String(contentsOf: directory.appendingPathComponent("Package.swift"), encoding: .utf8) else {
            return false
        }
        return manifest.contains("JackHostPluginSDK")
            && FileKind(atPath: directory.appendingPathComponent("Sources/JackHostPluginSDK").path) == .directory
    }

    /// The installed SDK beside the binary (`PREFIX/bin/jackhost` and `PREFIX/share/jackhost/swift-sdk`),
    /// else the checkout the binary was built in (`CHECKOUT/.build/.../jackhost`, or any other build
    /// path inside the checkout), else nil.
    static func find(executable: URL? = executable) -> URL? {
        guard let executable else { return nil }
        let bin = executable.deletingLastPathComponent()
        let installed = bin.deletingLastPathComponent().appendingPathComponent(installedSuffix).standardizedFileURL
        if isSDK(installed) { return installed }
        // A checkout: the binary is somewhere under one of its build directories (`.build`, or
        // another `--build-path` such as `.build-rtsan`), so the nearest ancestor that is one.
        var directory = bin.deletingLastPathComponent()
        while directory.path != "/" && !directory.path.isEmpty {
            if isSDK(directory) { return directory.standardizedFileURL }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }
}
