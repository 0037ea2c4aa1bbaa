// swift-tools-version:6.0
// An executable that embeds JackHost: captures every input and prints levels once a second.
import PackageDescription

let package = Package(
    name: "EmbeddedHost",
    dependencies: [.package(name: "JackHost", path: "../..")],
    targets: [
        .executableTarget(
            name: "EmbeddedHost",
            dependencies: [
                .product(name: "JackHost", package: "JackHost"),
                // Only for --embedded: a private dummy server and a test tone.
                .product(name: "JackHostSignals", package: "JackHost"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
