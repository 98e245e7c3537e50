// swift-tools-version:6.1
import PackageDescription

// Coverage-guided fuzz targets (libFuzzer) for every parser of untrusted bytes. A separate
// package so that the project's own `swift build` / `swift test` never see them; built by
// scripts/fuzz.sh with `-sanitize=fuzzer,address` (see docs/fuzzing.md).
//
// Each target is an executable whose `<module>_main` hands over to libFuzzer's driver
// (SwiftPM renames `main` of every executable to `<module>_main`).

let locafoto = "Locafoto"

func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name, dependencies: ["FuzzSupport"] + dependencies,
        swiftSettings: [.unsafeFlags(["-parse-as-library"])])
}

let package = Package(
    name: "LocafotoFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: locafoto, path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(name: "CFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CFuzzer"]),
        .target(
            name: "MediaFuzzing",
            dependencies: [
                "FuzzSupport", .product(name: "LocafotoMedia", package: locafoto),
                .product(name: "LocafotoFormats", package: locafoto),
            ]),

        fuzzTarget(
            "fuzz-frame",
            [
                .product(name: "LocafotoSession", package: locafoto), .product(name: "LocafotoWire", package: locafoto),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
            ]),
        fuzzTarget(
            "fuzz-noise",
            [.product(name: "LocafotoNoise", package: locafoto), .product(name: "LocafotoCrypto", package: locafoto)]),
        fuzzTarget(
            "fuzz-hello",
            [
                .product(name: "LocafotoSession", package: locafoto), .product(name: "LocafotoWire", package: locafoto),
                .product(name: "LocafotoCrypto", package: locafoto),
                .product(name: "LocafotoFormats", package: locafoto),
            ]),
        fuzzTarget(
            "fuzz-wire-message",
            [.product(name: "LocafotoWire", package: locafoto), .product(name: "LocafotoFormats", package: locafoto)]),
        fuzzTarget("fuzz-preview", [.product(name: "LocafotoFormats", package: locafoto)]),
        fuzzTarget("fuzz-image-header", [.product(name: "LocafotoFormats", package: locafoto)]),
        fuzzTarget(
            "fuzz-relay-message",
            [
                .product(name: "LocafotoWire", package: locafoto), .product(name: "LocafotoRelay", package: locafoto),
                .product(name: "LocafotoCrypto", package: locafoto),
            ]),
        fuzzTarget(
            "fuzz-locaphoto",
            [.product(name: "LocafotoFormats", package: locafoto), .product(name: "LocafotoCrypto", package: locafoto)]),
        fuzzTarget(
            "fuzz-loca",
            [.product(name: "LocafotoFormats", package: locafoto), .product(name: "LocafotoCrypto", package: locafoto)]),
        fuzzTarget(
            "fuzz-lfs",
            [.product(name: "LocafotoFormats", package: locafoto), .product(name: "LocafotoCrypto", package: locafoto)]),
        fuzzTarget(
            "fuzz-backup",
            [.product(name: "LocafotoVault", package: locafoto), .product(name: "LocafotoCrypto", package: locafoto)]),
        fuzzTarget(
            "fuzz-txt",
            [
                .product(name: "LocafotoPeers", package: locafoto), .product(name: "LocafotoClock", package: locafoto),
                .product(name: "LocafotoDiscovery", package: locafoto),
                .product(name: "LocafotoFormats", package: locafoto), .product(name: "LocafotoWire", package: locafoto),
            ]),
        fuzzTarget("fuzz-web-login", [.product(name: "LocafotoWeb", package: locafoto)]),
        fuzzTarget(
            "fuzz-localsend",
            [.product(name: "LocafotoLocalSend", package: locafoto), .product(name: "LocafotoWire", package: locafoto)]),
        fuzzTarget("fuzz-jpeg", ["MediaFuzzing", .product(name: "LocafotoFormats", package: locafoto)]),
        fuzzTarget("fuzz-png", ["MediaFuzzing", .product(name: "LocafotoFormats", package: locafoto)]),
        fuzzTarget("fuzz-webp", ["MediaFuzzing", .product(name: "LocafotoFormats", package: locafoto)]),
        fuzzTarget("fuzz-heif", ["MediaFuzzing", .product(name: "LocafotoFormats", package: locafoto)]),
        fuzzTarget("fuzz-tiff", ["MediaFuzzing", .product(name: "LocafotoFormats", package: locafoto)]),
        fuzzTarget("fuzz-exif", [.product(name: "LocafotoMedia", package: locafoto)]),
    ],
    swiftLanguageModes: [.v6]
)
