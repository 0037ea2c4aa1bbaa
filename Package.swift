// swift-tools-version:6.0
// JackHost: capture multichannel audio from a JACK server and hand it to
// pluggable Swift consumers. Only the toolchain's own modules are used; libjack
// and libsndfile come in as system libraries.
import PackageDescription

let package = Package(
    name: "JackHost",
    products: [
        .library(name: "JackHostTypes", targets: ["JackHostTypes"]),
        .library(name: "JackHost", targets: ["JackHost"]),
        .library(name: "JackHostConsumers", targets: ["JackHostConsumers"]),
        .library(name: "JackHostSignals", targets: ["JackHostSignals"]),
        .library(name: "JackHostTesting", targets: ["JackHostTesting"]),
        .library(name: "JackHostPluginSDK", targets: ["JackHostPluginSDK"]),
        .library(name: "JackHostPluginTesting", targets: ["JackHostPluginTesting"]),
        .library(name: "JackHostPlugins", targets: ["JackHostPlugins"]),
        .executable(name: "jackhost", targets: ["jackhost"]),
    ],
    targets: [
        // libjack (jackd2) through pkg-config, plus a small shim for what Swift cannot import.
        .systemLibrary(
            name: "CJack",
            pkgConfig: "jack",
            providers: [.apt(["libjack-jackd2-dev"])]
        ),
        // libsndfile through pkg-config, used by the recorder.
        .systemLibrary(
            name: "CSndFile",
            pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]
        ),
        // libsoxr through pkg-config: sample-rate conversion for consumers that ask for a rate.
        .systemLibrary(
            name: "CSoxr",
            pkgConfig: "soxr",
            providers: [.apt(["libsoxr-dev"])]
        ),
        // libmicrohttpd through pkg-config: the HTTP server of the `--http` live view.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // FFTW (single precision) through pkg-config: the live view's spectrum.
        .systemLibrary(
            name: "CFFTW",
            pkgConfig: "fftw3f",
            providers: [.apt(["libfftw3-dev"])]
        ),
        // liblo through pkg-config: the OSC message codec of `--osc` (the CLI owns the socket).
        .systemLibrary(
            name: "CLo",
            pkgConfig: "liblo",
            providers: [.apt(["liblo-dev"])]
        ),
        // libebur128 through pkg-config: EBU R128 loudness and true peak for `--loudness`.
        .systemLibrary(
            name: "CEBUR128",
            pkgConfig: "libebur128",
            providers: [.apt(["libebur128-dev"])]
        ),
        // POSIX calls Swift cannot import as they are (thread names).
        .target(name: "CPosix"),
        // Async-signal-safe SIGINT/SIGTERM counting for the CLI.
        .target(name: "CSignals"),
        // AVX2 sample-conversion kernels, chosen at run time (Swift cannot target one function
        // at a newer CPU than its module; the portable kernels are Swift, in JackHostConsumers),
        // and the streaming copy the deferred rings are written with.
        .target(name: "CSampleKernels"),
        // What a consumer or plugin touches and nothing else: the block, buffer view, timestamp,
        // stream format, consumer protocols and session events. No dependencies at all (not even
        // libc), so a plugin built on it links no libjack, libsndfile or Foundation.
        .target(name: "JackHostTypes"),
        // Small POSIX helpers shared by the core and the consumers, none of them JACK's: a mutex, a
        // named worker thread, unbuffered descriptor output, file kinds, text formatting, and the
        // clocks: CLOCK_MONOTONIC, and CycleClock, the clock of the blocks' cycle times (libjack's
        // jack_get_time, which the core installs when it opens a client: jack2 reads
        // CLOCK_MONOTONIC_RAW, pipewire-jack CLOCK_MONOTONIC). No libjack, so JackHostConsumers can
        // use them without linking it. Its declarations are `package`, for this package's own
        // targets only, so it has no product (a product of JackHostConsumers brings it along).
        .target(name: "JackHostSupport", dependencies: ["CPosix"]),
        // The client layer, session info, host engine, rings; re-exports JackHostTypes and
        // JackHostSupport.
        .target(name: "JackHost", dependencies: ["JackHostTypes", "JackHostSupport", "CJack", "CSampleKernels", "CPosix"]),
        // Known audio where there is no real source: test signals (tones, a sine, a bit-exact
        // sequence) played by a JACK client, and a private dummy jackd to play them on (with the
        // child-process helper that starts it). Named after what it provides, signals, not after
        // who uses it: the shipping binary does (`jackhost signal` checks a real setup end to end;
        // `--embedded-server` is a first use with no JACK set up), and so do demos and the tests
        // of consumers. Not part of the core, and no test code: the CLI depends on it directly.
        .target(name: "JackHostSignals", dependencies: ["JackHost"]),
        // What only tests need, never linked into jackhost: the sequence's inverse (which frame a
        // sample names) and fault injection (a server crash). Re-exports JackHostSignals.
        .target(name: "JackHostTesting", dependencies: ["JackHostSignals"]),
        // Built-in consumers (meter, recorder, stream) and the sample-format converters. Not on the
        // core: JackHostTypes and JackHostSupport only, so nothing here links libjack, and a meter or
        // a recorder could be used inside a plugin.
        .target(
            name: "JackHostConsumers",
            dependencies: ["JackHostTypes", "JackHostSupport", "CSndFile", "CSoxr", "CEBUR128", "CSampleKernels", "CPosix"]),
        // The versioned C plugin interface: the only thing a plugin and the host share.
        .target(name: "CJackHostPlugin"),
        // For plugin authors: export a Swift consumer through the C interface in one line. Slim on
        // purpose: JackHostTypes and the C interface only, so a plugin links no host libraries.
        .target(name: "JackHostPluginSDK", dependencies: ["JackHostTypes", "CJackHostPlugin"]),
        // For plugin authors' tests: drive a plugin without JACK, read test audio with libsndfile.
        .target(name: "JackHostPluginTesting", dependencies: ["JackHostPluginSDK", "CJackHostPlugin", "CSndFile"]),
        // For the host: load plugins by path and adapt them to consumers.
        .target(name: "JackHostPlugins", dependencies: ["JackHost", "CJackHostPlugin"]),
        // The `--http` live view: its settings, the HTTP server (libmicrohttpd), the page, the JSON
        // snapshot and the spectrum (FFTW); the only user of CMicroHTTPD and CFFTW. Its options'
        // parsing stays in the CLI, which owns the argument parser and usage errors; the plugins'
        // results come through JackHostPlugins' PluginResultSource.
        .target(
            name: "JackHostLiveView", dependencies: ["JackHost", "JackHostConsumers", "JackHostPlugins", "JackHostSupport", "CMicroHTTPD", "CFFTW"]),
        // The command-line front end: argument parsing and the subcommands' wiring (the live view
        // is JackHostLiveView's), and `--osc` remote control (the only user of CLo).
        .target(
            name: "JackHostCLI",
            dependencies: [
                "JackHost", "JackHostConsumers", "JackHostLiveView", "JackHostPlugins", "JackHostSignals", "JackHostSupport", "CSignals", "CPosix",
                "CLo",
            ]),
        // The executable's first instruction: a constructor that installs the signal handlers
        // before the Swift runtime starts (the library and the test bundles never link it).
        .target(name: "CJackhostStartup", dependencies: ["CSignals"]),
        .executableTarget(name: "jackhost", dependencies: ["JackHostCLI", "CJackhostStartup"]),
        .testTarget(name: "JackHostTests", dependencies: ["JackHost", "JackHostTesting"]),
        .testTarget(name: "JackHostConsumersTests", dependencies: ["JackHostConsumers", "JackHostTypes", "JackHostSupport", "CSndFile"]),
        .testTarget(name: "JackHostCLITests", dependencies: ["JackHostCLI", "JackHostLiveView", "JackHostPlugins", "CLo"]),
        .testTarget(
            name: "JackHostPluginTests",
            dependencies: ["JackHostPlugins", "JackHostPluginSDK", "JackHostPluginTesting", "CJackHostPlugin"]
        ),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["JackHost", "JackHostConsumers", "JackHostPlugins", "JackHostTesting", "CSndFile"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
