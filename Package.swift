// swift-tools-version:6.0
// JackHost: capture multichannel audio from a JACK server and hand it to
// pluggable Swift consumers. Only the toolchain's own modules are used; libjack
// and libsndfile come in as system libraries.
import PackageDescription

let package = Package(
    name: "JackHost",
    products: [
        .library(name: "JackHost", targets: ["JackHost"]),
        .library(name: "JackHostConsumers", targets: ["JackHostConsumers"]),
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
        // Async-signal-safe SIGINT/SIGTERM counting for the CLI.
        .target(name: "CSignals"),
        // The client layer, session info, host engine, buffer view, consumer protocol, rings.
        .target(name: "JackHost", dependencies: ["CJack"]),
        // Built-in consumers (meter, recorder, stream) and the sample-format converters.
        .target(name: "JackHostConsumers", dependencies: ["JackHost", "CSndFile"]),
        // The command-line front end: argument parsing and the subcommands' wiring.
        .target(name: "JackHostCLI", dependencies: ["JackHost", "JackHostConsumers", "CSignals"]),
        .executableTarget(name: "jackhost", dependencies: ["JackHostCLI"]),
        .testTarget(name: "JackHostTests", dependencies: ["JackHost"]),
        .testTarget(name: "JackHostConsumersTests", dependencies: ["JackHostConsumers", "CSndFile"]),
        .testTarget(name: "JackHostCLITests", dependencies: ["JackHostCLI"]),
        .testTarget(
            name: "IntegrationTests",
            dependencies: ["JackHost", "JackHostConsumers", "CSndFile"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
