// swift-tools-version:6.0
// Micro-benchmarks of JackHost's deferred-delivery ring and sample-conversion kernels,
// each measured side by side with a plain C peer (scalar loop, memcpy) in the same run.
// It depends on the root package by relative path and builds in its own .build folder:
//   swift build -c release --package-path Benchmarks/Kernels
// scripts/bench runs it; `kernel-bench --help` lists its options.
import PackageDescription

let package = Package(
    name: "JackHostKernelBenchmarks",
    dependencies: [
        // The root package (JackHost). Named, so that the product references below do not
        // depend on the name of the folder the repository was cloned into.
        .package(name: "JackHost", path: "../..")
    ],
    targets: [
        // The peers: scalar loops with auto-vectorisation disabled, and memcpy.
        // -fno-math-errno lets lrintf compile to one cvtss2si, the fastest honest scalar rounding.
        .target(name: "CBaselines", cSettings: [.unsafeFlags(["-O2", "-fno-math-errno"])]),
        .executableTarget(
            name: "kernel-bench",
            dependencies: [
                .product(name: "JackHost", package: "JackHost"),
                .product(name: "JackHostConsumers", package: "JackHost"),
                "CBaselines",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
