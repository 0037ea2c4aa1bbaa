// swift-tools-version:6.3
// FrequencyEstimator: a real-time JackHost plugin that estimates each input's frequency.
// Builds libFrequencyEstimator.so; load it with `jackhost run --plugin PATH/libFrequencyEstimator.so`.
// Tools version 6.3: Export.swift uses the @c attribute, new in Swift 6.3.
import PackageDescription

let package = Package(
    name: "FrequencyEstimator",
    products: [
        // .dynamic: a shared object jackhost can dlopen.
        .library(name: "FrequencyEstimator", type: .dynamic, targets: ["FrequencyEstimator"])
    ],
    dependencies: [
        // The JackHost repository this example lives in.
        .package(name: "JackHost", path: "../../..")
    ],
    targets: [
        // The plugin links the slim SDK only: no libjack, no libsndfile, no Foundation.
        .target(name: "FrequencyEstimator", dependencies: [.product(name: "JackHostPluginSDK", package: "JackHost")]),
        // Its tests drive it without JACK, through JackHostPluginTesting.
        .testTarget(
            name: "FrequencyEstimatorTests",
            dependencies: ["FrequencyEstimator", .product(name: "JackHostPluginTesting", package: "JackHost")]),
    ],
    swiftLanguageModes: [.v6]
)
