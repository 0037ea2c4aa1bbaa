// swift-tools-version:6.3
// LoudnessMeter: a deferred JackHost plugin measuring EBU R128 / ITU-R BS.1770 loudness per input.
// Builds libLoudnessMeter.so; load it with `jackhost run --plugin PATH/libLoudnessMeter.so:output=loudness.jsonl`.
// Tools version 6.3: Export.swift uses the @c attribute, new in Swift 6.3.
import PackageDescription

let package = Package(
    name: "LoudnessMeter",
    products: [
        // .dynamic: a shared object jackhost can dlopen.
        .library(name: "LoudnessMeter", type: .dynamic, targets: ["LoudnessMeter"])
    ],
    dependencies: [
        // The JackHost repository this example lives in.
        .package(name: "JackHost", path: "../../..")
    ],
    targets: [
        // The plugin links the slim SDK only: no libjack, no libsndfile, no Foundation.
        .target(name: "LoudnessMeter", dependencies: [.product(name: "JackHostPluginSDK", package: "JackHost")]),
        // Its tests drive it without JACK, through JackHostPluginTesting.
        .testTarget(
            name: "LoudnessMeterTests",
            dependencies: ["LoudnessMeter", .product(name: "JackHostPluginTesting", package: "JackHost")]),
    ],
    swiftLanguageModes: [.v6]
)
