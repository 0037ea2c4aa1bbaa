// swift-tools-version:6.0
// FrequencyEstimator: a real-time JackHost plugin that estimates each input's frequency.
// Builds libFrequencyEstimator.so; load it with `jackhost run --plugin PATH/libFrequencyEstimator.so`.
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
        .target(name: "FrequencyEstimator", dependencies: [.product(name: "JackHostPluginSDK", package: "JackHost")]),
        .testTarget(
            name: "FrequencyEstimatorTests",
            dependencies: ["FrequencyEstimator", .product(name: "JackHostPluginSDK", package: "JackHost")]),
    ],
    swiftLanguageModes: [.v6]
)
