// swift-tools-version:6.0
// The JackHost Swift plugin SDK as the jackhost-dev package installs it, in
// /usr/share/jackhost/swift-sdk: the targets of the JackHost repository's Package.swift that a
// plugin needs (JackHostTypes, the C interface, JackHostPluginSDK, JackHostPluginTesting), with
// the same names, so a plugin's manifest reads the same against this SDK and against a checkout.
// scripts/package copies their sources beside this manifest. Build plugins with the Swift version
// jackhost runs on (`pkg-config --variable=swift_version jackhost-plugin`).
import PackageDescription

let package = Package(
    name: "JackHost",
    products: [
        .library(name: "JackHostTypes", targets: ["JackHostTypes"]),
        .library(name: "JackHostPluginSDK", targets: ["JackHostPluginSDK"]),
        .library(name: "JackHostPluginTesting", targets: ["JackHostPluginTesting"]),
    ],
    targets: [
        // libsndfile through pkg-config (libsndfile1-dev), for JackHostPluginTesting's test audio.
        .systemLibrary(
            name: "CSndFile",
            pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]
        ),
        // What a consumer or plugin touches: the block, buffer view, stream format, protocols.
        .target(name: "JackHostTypes"),
        // The versioned C plugin interface: the only thing a plugin and the host share.
        .target(name: "CJackHostPlugin"),
        // Export a Swift consumer through the C interface in one line.
        .target(name: "JackHostPluginSDK", dependencies: ["JackHostTypes", "CJackHostPlugin"]),
        // Drive a plugin without JACK in its tests, read test audio with libsndfile.
        .target(name: "JackHostPluginTesting", dependencies: ["JackHostPluginSDK", "CJackHostPlugin", "CSndFile"]),
    ],
    swiftLanguageModes: [.v6]
)
