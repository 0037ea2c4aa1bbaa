// swift-tools-version:6.0
// LoudnessMeter: a deferred JackHost plugin measuring EBU R128 / ITU-R BS.1770 loudness per input.
// Builds libLoudnessMeter.so; load it with `jackhost run --plugin PATH/libLoudnessMeter.so:output=loudness.jsonl`.
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
        .target(name: "LoudnessMeter", dependencies: [.product(name: "JackHostPluginSDK", package: "JackHost")]),
        .testTarget(
            name: "LoudnessMeterTests",
            dependencies: ["LoudnessMeter", .product(name: "JackHostPluginSDK", package: "JackHost")]),
    ],
    swiftLanguageModes: [.v6]
)
