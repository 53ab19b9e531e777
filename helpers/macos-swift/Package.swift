// swift-tools-version:5.9
// Tools 5.9 (Xcode 15+, Swift 5.9 on Linux) is the oldest that knows
// `.macOS(.v14)`, which SCScreenshotManager.captureImage needs. Tools 5.x
// builds in Swift 5 language mode with any newer compiler (Xcode 16/26,
// Swift 6.x), so the Swift 6 strict-concurrency errors about imported C
// globals, non-Sendable SCWindow and C callbacks stay warnings; the code
// still keeps shared state behind locks as if they were errors.
import PackageDescription

let package = Package(
    name: "deckhand-helper-macos",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "deckhand-helper-macos", targets: ["deckhand-helper-macos"]),
    ],
    targets: [
        // The wire: msgpack codec, frames, hello, dispatcher, errors,
        // receipts. Plain Swift + Foundation; builds and tests on Linux.
        .target(name: "DeckhandWire", path: "Sources/DeckhandWire"),
        // The platform: pure logic (role mapping, locators, geometry, key
        // names, capabilities) builds everywhere; everything that calls AX,
        // ScreenCaptureKit, CoreGraphics or AppKit is behind `#if os(macOS)`.
        .target(
            name: "DeckhandMac",
            dependencies: ["DeckhandWire"],
            path: "Sources/DeckhandMac",
            linkerSettings: [
                .linkedFramework("ApplicationServices", .when(platforms: [.macOS])),
                .linkedFramework("AppKit", .when(platforms: [.macOS])),
                .linkedFramework("ScreenCaptureKit", .when(platforms: [.macOS])),
                .linkedFramework("ImageIO", .when(platforms: [.macOS])),
            ]
        ),
        .executableTarget(
            name: "deckhand-helper-macos",
            dependencies: ["DeckhandWire", "DeckhandMac"],
            path: "Sources/deckhand-helper-macos"
        ),
        .testTarget(name: "DeckhandWireTests", dependencies: ["DeckhandWire"], path: "Tests/DeckhandWireTests"),
        .testTarget(name: "DeckhandMacTests", dependencies: ["DeckhandMac", "DeckhandWire"], path: "Tests/DeckhandMacTests"),
    ]
)
