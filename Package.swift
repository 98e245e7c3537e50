// swift-tools-version:6.2
import PackageDescription

// Targets in layers, I/O-free at the bottom (docs/architecture.md "Layers" and "Targets").
// The packages' products the targets below use, named once:
let nioCore: Target.Dependency = .product(name: "NIOCore", package: "swift-nio")
let nioPosix: Target.Dependency = .product(name: "NIOPosix", package: "swift-nio")
let logging: Target.Dependency = .product(name: "Logging", package: "swift-log")
let grdb: Target.Dependency = .product(name: "GRDB", package: "GRDB.swift")
let serviceLifecycle: Target.Dependency = .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")
let hummingbird: Target.Dependency = .product(name: "Hummingbird", package: "hummingbird")
let httpTypes: Target.Dependency = .product(name: "HTTPTypes", package: "swift-http-types")

// The release binary carries the Swift runtime, so that the Debian package and the container
// image need no toolchain, as `--static-swift-stdlib` does. Said here, for this executable's
// link only, because that option applies to the whole build: the test bundle cannot link the
// runtime statically (swift-testing has no static build), so scripts/test.sh would need a
// second release build. Code compiled against the shared runtime does not name the static
// Foundation's own dependencies, so they are listed: Swift 6.3's. Other toolchains keep
// `--static-swift-stdlib` (scripts/package-deb.sh and the Dockerfile pass it on any toolchain).
#if compiler(>=6.3)
    let staticSwiftRuntime: [LinkerSetting] = [
        .unsafeFlags(
            [
                "-static-stdlib", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCShims",
                "-l_FoundationCollections", "-lswiftSynchronization",
            ], .when(configuration: .release))
    ]
#else
    let staticSwiftRuntime: [LinkerSetting] = []
#endif

let package = Package(
    name: "Locafoto",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "locafoto", targets: ["locafoto"]),
        // For the fuzz targets in Fuzz/ (a separate package that depends on this one by path).
        .library(name: "LocafotoClock", targets: ["LocafotoClock"]),
        .library(name: "LocafotoErrors", targets: ["LocafotoErrors"]),
        .library(name: "LocafotoFiles", targets: ["LocafotoFiles"]),
        .library(name: "LocafotoCrypto", targets: ["LocafotoCrypto"]),
        .library(name: "LocafotoNoise", targets: ["LocafotoNoise"]),
        .library(name: "LocafotoFormats", targets: ["LocafotoFormats"]),
        .library(name: "LocafotoWire", targets: ["LocafotoWire"]),
        .library(name: "LocafotoVault", targets: ["LocafotoVault"]),
        .library(name: "LocafotoMedia", targets: ["LocafotoMedia"]),
        .library(name: "LocafotoDiscovery", targets: ["LocafotoDiscovery"]),
        .library(name: "LocafotoRelay", targets: ["LocafotoRelay"]),
        .library(name: "LocafotoLocalSend", targets: ["LocafotoLocalSend"]),
        .library(name: "LocafotoSession", targets: ["LocafotoSession"]),
        .library(name: "LocafotoNode", targets: ["LocafotoNode"]),
        .library(name: "LocafotoPeers", targets: ["LocafotoPeers"]),
        .library(name: "LocafotoAgent", targets: ["LocafotoAgent"]),
        .library(name: "LocafotoControl", targets: ["LocafotoControl"]),
        .library(name: "LocafotoWeb", targets: ["LocafotoWeb"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // The control API's HTTP server (Unix socket): routing, streaming bodies, events.
        // Without its default traits: no swift-configuration to build.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // TLS for LocalSend's HTTPS API (server and client certificates).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // HTTP/1 request parts as swift-http-types (what Hummingbird's pipeline carries), for
        // LocalSend's body deadline (already in the build through Hummingbird).
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // HTTP's fields and statuses as Hummingbird's requests and responses carry them (already
        // in the build through Hummingbird; named because our code spells its types).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        // C libraries through pkg-config; imported only by the Swift layer that owns them.
        .systemLibrary(
            name: "CSodium", path: "Sources/CSodium",
            pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        // OpenSSL's libcrypto: the bulk AEADs (2-3x libsodium 1.0.18's speed here) and the LocalSend certificate.
        .systemLibrary(
            name: "COpenSSL", path: "Sources/COpenSSL",
            pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(
            name: "CAvahi", path: "Sources/CAvahi",
            providers: [.apt(["libavahi-client-dev"])]),
        // libdbus, for desktop notifications on the user's session bus.
        .systemLibrary(
            name: "CDBus", path: "Sources/CDBus",
            pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        // libvips' headers only: the library itself is opened at first use (CMediaShim), so
        // glib's flags are all the build needs (vips/vips.h is on the default include path).
        .systemLibrary(
            name: "CVips", path: "Sources/CVips",
            pkgConfig: "glib-2.0", providers: [.apt(["libvips-dev"])]),
        .systemLibrary(
            name: "CExif", path: "Sources/CExif",
            pkgConfig: "libexif", providers: [.apt(["libexif-dev"])]),
        // The variadic libvips calls LocafotoMedia needs, as plain C functions (Swift cannot
        // call C variadics); gets the glib cflags through CVips and loads libvips with dlopen.
        .target(name: "CMediaShim", dependencies: ["CVips"], path: "Sources/CMediaShim"),

        // libgcrypt's BLAKE2b-256 behind plain C functions (gcry_control is variadic): the
        // content hash of photos, where it is faster than libsodium's (ContentHashBackend).
        .target(
            name: "CGcrypt", path: "Sources/CGcrypt",
            linkerSettings: [.linkedLibrary("gcrypt")]),

        // Safe Swift over libsodium: keys, AEAD, signatures, sealed boxes, KDF, hashes (the
        // bulk AEADs through OpenSSL's libcrypto, photo content hashes where libgcrypt is faster).
        .target(name: "LocafotoCrypto", dependencies: ["CSodium", "COpenSSL", "CGcrypt", "LocafotoErrors"]),
        // The time every timer reads (`AgentClock`): the machine's, or a test's. No I/O.
        .target(name: "LocafotoClock"),
        // The one shape of the layers' errors (`LayerError`: a code, a message, a cause). No I/O.
        .target(name: "LocafotoErrors"),
        // The POSIX file calls of the vault and the relay (modes, fsync, exclusive creation,
        // bounded reads), each failure worded by the layer that made the call.
        .target(name: "LocafotoFiles"),
        // The Noise Protocol Framework (rev. 34): pure state machines, no I/O.
        .target(name: "LocafotoNoise", dependencies: ["LocafotoCrypto", "LocafotoErrors"]),
        // File formats: LOCA, .locaphoto bundles, content sniffing, peer fingerprints.
        .target(name: "LocafotoFormats", dependencies: ["LocafotoCrypto", "LocafotoErrors"]),
        // Wire protocol: framing, messages, error codes, session state machines. No sockets.
        .target(name: "LocafotoWire", dependencies: ["LocafotoFormats", "LocafotoCrypto", "LocafotoErrors"]),
        // Which photos: the vault's query and selection, which are also the control API's. No I/O.
        .target(name: "LocafotoQuery", dependencies: ["LocafotoErrors"]),
        // The encrypted vault: SQLite catalog (GRDB) + LOCA files.
        .target(
            name: "LocafotoVault",
            dependencies: [
                "LocafotoCrypto", "LocafotoFormats", "LocafotoErrors", "LocafotoFiles", "LocafotoQuery",
                grdb,
            ]),
        // LocalSend v2 (phones and other apps on the LAN): its JSON bodies read within limits,
        // checked and cleaned. No I/O.
        .target(name: "LocafotoLocalSend", dependencies: ["LocafotoWire", "LocafotoFormats", "LocafotoErrors"]),
        // Photos as photos: metadata, thumbnails, location removal, compression (libvips, libexif).
        .target(name: "LocafotoMedia", dependencies: ["CMediaShim", "CExif", "LocafotoFormats", "LocafotoErrors"]),
        // Photo decoding out of the agent's process: `locafoto media-worker` and the pool that runs it.
        .target(name: "LocafotoMediaWorker", dependencies: ["LocafotoErrors", "LocafotoMedia", "LocafotoFormats"]),
        // mDNS/DNS-SD through avahi-client.
        .target(name: "LocafotoDiscovery", dependencies: ["CAvahi", "LocafotoErrors"]),
        // Sessions with peers: TCP through SwiftNIO, the peer pipeline (framing, idle and
        // handshake deadlines, connection caps), the Noise XX handshake with pinning; one
        // connect, one bind, one initiator and one responder path for every role.
        .target(
            name: "LocafotoSession",
            dependencies: [
                "LocafotoCrypto", "LocafotoNoise", "LocafotoFormats", "LocafotoWire", "LocafotoClock",
                nioCore, nioPosix, logging,
            ]),
        // The desktop: notifications with actions (org.freedesktop.Notifications over libdbus).
        .target(name: "LocafotoDesktop", dependencies: ["CDBus"]),
        // The control API's types (protocol/control-api.md): requests, answers and events as
        // Codable values that the agent, the CLI and the tests share. Foundation only.
        .target(name: "LocafotoControl", dependencies: ["LocafotoErrors", "LocafotoQuery"]),
        // The web app: its pages (HTML, JS, CSS in Assets/, compiled in; scripts/lint-web.sh
        // checks them) and who may use it (login codes, sessions, cookies). No networking.
        .target(
            name: "LocafotoWeb", dependencies: ["LocafotoCrypto", "LocafotoClock"],
            resources: [
                "index.html", "app.js", "app.css", "login.js", "login-needed.html", "login-failed.html",
                "logged-in.html",
            ].map { .embedInCode("Assets/" + $0) }),
        // What every role of a node shares: its home, identity, store, events and errors.
        .target(
            name: "LocafotoNode",
            dependencies: [
                "LocafotoCrypto", "LocafotoFormats", "LocafotoWire", "LocafotoVault", "LocafotoControl",
                "LocafotoClock", "LocafotoErrors",
                nioCore, nioPosix, logging, grdb,
            ]),
        // Peers: who is online where (mDNS and static addresses), how they are resolved from what
        // a user types, pairing codes, and the sessions every role opens and accepts.
        .target(
            name: "LocafotoPeers",
            dependencies: [
                "LocafotoErrors",
                "LocafotoNode", "LocafotoSession", "LocafotoDiscovery", "LocafotoWire", "LocafotoFormats",
                "LocafotoCrypto", "LocafotoNoise", "LocafotoControl", "LocafotoClock",
                nioCore, nioPosix, logging, grdb,
            ]),
        // Transfers: what every role that sends shares — the outbox where transfers run, each
        // transfer and its stored plan, the one item streamer, pacing, previews made off the
        // offer's path, receipts' endings, and the route to peers of another protocol.
        .target(
            name: "LocafotoTransfers",
            dependencies: [
                "LocafotoClock", "LocafotoControl", "LocafotoCrypto", "LocafotoErrors", "LocafotoFormats",
                "LocafotoMedia", "LocafotoMediaWorker", "LocafotoNode", "LocafotoPeers", "LocafotoRelay",
                "LocafotoSession", "LocafotoVault", "LocafotoWire",
                grdb, serviceLifecycle,
            ]),
        // The inbox: offers to this node from any role that receives (peers, relays, LocalSend),
        // the policy, limits, decisions and expiry, their records, and the spool's files.
        .target(
            name: "LocafotoInbox",
            dependencies: [
                "LocafotoClock", "LocafotoControl", "LocafotoCrypto", "LocafotoErrors", "LocafotoFormats",
                "LocafotoNode", "LocafotoPeers", "LocafotoSession", "LocafotoWire",
                grdb,
            ]),
        // Receiving: offers to this node into the inbox, the decision, items into the spool, and
        // the one importer that commits received photos to the vault and the store.
        .target(
            name: "LocafotoReceiving",
            dependencies: [
                "LocafotoErrors",
                "LocafotoNode", "LocafotoPeers", "LocafotoInbox", "LocafotoSession", "LocafotoWire", "LocafotoFormats",
                "LocafotoCrypto", "LocafotoVault", "LocafotoControl", "LocafotoClock",
                nioCore, logging, serviceLifecycle,
            ]),
        // Sending: sends to one peer or several (on the transfers' outbox), resume, deposits at
        // relays and their receipts.
        .target(
            name: "LocafotoSending",
            dependencies: [
                "LocafotoErrors",
                "LocafotoNode", "LocafotoPeers", "LocafotoTransfers", "LocafotoSession", "LocafotoWire",
                "LocafotoFormats", "LocafotoCrypto", "LocafotoVault", "LocafotoMedia", "LocafotoMediaWorker",
                "LocafotoNoise", "LocafotoControl", "LocafotoClock",
                nioCore, nioPosix, logging, serviceLifecycle,
            ]),
        // The relay role: deposits from senders into the relay's store, hand-on to recipients,
        // receipts back, expiry (on LocafotoRelay's store).
        .target(
            name: "LocafotoRelayServer",
            dependencies: [
                "LocafotoErrors",
                "LocafotoNode", "LocafotoPeers", "LocafotoTransfers", "LocafotoRelay", "LocafotoSession",
                "LocafotoWire", "LocafotoFormats", "LocafotoCrypto", "LocafotoClock", "LocafotoControl",
                nioCore, logging, serviceLifecycle,
            ]),
        // The control server: the socket's HTTP plumbing on Hummingbird (route table, requests,
        // answers, the one error middleware), the web app's guard, and the per-resource
        // controllers that answer the control API.
        .target(
            name: "LocafotoControlServer",
            dependencies: [
                "LocafotoErrors",
                "LocafotoNode", "LocafotoPeers", "LocafotoReceiving", "LocafotoSending", "LocafotoTransfers",
                "LocafotoInbox", "LocafotoControl", "LocafotoWeb", "LocafotoVault", "LocafotoMedia", "LocafotoFormats",
                "LocafotoCrypto", "LocafotoWire",
                "LocafotoClock", "LocafotoLocalSendServer", "LocafotoLocalSend", "LocafotoMediaWorker",
                "LocafotoSession", "LocafotoQuery",
                hummingbird, httpTypes, nioCore, logging, serviceLifecycle,
            ]),
        // LocalSend v2 for phones and other apps on the LAN, while it is on: the node's TLS
        // certificate, the HTTPS API a receiver serves, and its offers into the inbox and vault.
        .target(
            name: "LocafotoLocalSendServer",
            dependencies: [
                "LocafotoLocalSend", "LocafotoNode", "LocafotoInbox", "LocafotoTransfers", "LocafotoVault",
                "LocafotoCrypto", "LocafotoWire", "LocafotoFormats",
                "LocafotoFiles", "LocafotoControl", "LocafotoClock", "LocafotoSession", "LocafotoErrors",
                "LocafotoQuery",
                hummingbird, .product(name: "HummingbirdCore", package: "hummingbird"), httpTypes,
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"), nioCore, nioPosix,
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                logging, serviceLifecycle, grdb,
            ]),
        // The agent: inbox, outbox, importer, relay server, control socket, as services.
        .target(
            name: "LocafotoAgent",
            dependencies: [
                "LocafotoErrors",
                "LocafotoCrypto", "LocafotoFormats", "LocafotoWire", "LocafotoSession",
                "LocafotoVault", "LocafotoDiscovery", "LocafotoMedia", "LocafotoMediaWorker", "LocafotoRelay",
                "LocafotoControl", "LocafotoClock", "LocafotoNode", "LocafotoPeers",
                "LocafotoReceiving", "LocafotoSending", "LocafotoTransfers", "LocafotoInbox", "LocafotoRelayServer",
                "LocafotoControlServer", "LocafotoDesktop", "LocafotoWeb", "LocafotoLocalSendServer",
                hummingbird, httpTypes, nioCore, nioPosix,
                .product(name: "NIOHTTP1", package: "swift-nio"),
                logging, serviceLifecycle, .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ]),
        // The relay's durable store: deposits sealed to recipients, queues, receipts, quotas.
        // No networking: the agent's sessions call it.
        .target(
            name: "LocafotoRelay",
            dependencies: [
                "LocafotoErrors",
                "LocafotoCrypto", "LocafotoFormats", "LocafotoWire", "LocafotoFiles",
                grdb,
            ]),
        // The one executable: agent, relay and the CLI client of the control socket.
        .executableTarget(
            name: "locafoto",
            dependencies: [
                "LocafotoErrors",
                "LocafotoAgent", "LocafotoNode", "LocafotoPeers", "LocafotoRelayServer", "LocafotoControlServer",
                "LocafotoSession", "LocafotoSending", "LocafotoTransfers", "LocafotoFormats", "LocafotoCrypto",
                "LocafotoRelay", "LocafotoWire",
                "LocafotoVault", "LocafotoMedia", "LocafotoControl", "LocafotoMediaWorker", "LocafotoQuery",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                nioCore, nioPosix, logging,
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            linkerSettings: staticSwiftRuntime),

        // Benchmarks are programs, not tests (scripts/bench-*.sh run them in release mode).
        .executableTarget(
            name: "locafoto-bench", dependencies: ["LocafotoErrors", "LocafotoMedia", "LocafotoFormats"]),
        // The sealed catalog at 100,000 photos (scripts/bench-catalog.sh): unlock, memory, list.
        .executableTarget(
            name: "locafoto-catalog-bench", dependencies: ["LocafotoVault", "LocafotoCrypto", "LocafotoQuery"]),

        // What several test targets share (the checkout's root, the protocol's vectors, the layers'
        // errors as thrown, a reproducible random source). Tests only.
        .target(
            name: "LocafotoTestSupport", dependencies: ["LocafotoClock", "LocafotoErrors"],
            path: "Tests/LocafotoTestSupport"),
        // CSodium: the bulk AEADs are checked byte for byte against libsodium's.
        .testTarget(
            name: "LocafotoCryptoTests",
            dependencies: ["LocafotoErrors", "LocafotoCrypto", "CSodium", "LocafotoTestSupport"]),
        .testTarget(
            name: "LocafotoNoiseTests",
            dependencies: ["LocafotoErrors", "LocafotoNoise", "LocafotoCrypto", "LocafotoTestSupport"],
            resources: [.copy("Vectors")]),
        .testTarget(
            name: "LocafotoFormatsTests",
            dependencies: ["LocafotoErrors", "LocafotoFormats", "LocafotoCrypto", "LocafotoTestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "LocafotoWireTests",
            dependencies: [
                "LocafotoErrors", "LocafotoWire", "LocafotoFormats", "LocafotoCrypto", "LocafotoTestSupport",
            ]),
        .testTarget(
            name: "LocafotoVaultTests",
            dependencies: [
                "LocafotoErrors", "LocafotoVault", "LocafotoFormats", "LocafotoCrypto", "LocafotoFiles",
                "LocafotoQuery", "LocafotoTestSupport", grdb,
            ]),
        .testTarget(
            name: "LocafotoDiscoveryTests",
            dependencies: ["LocafotoErrors", "LocafotoDiscovery", "CAvahi", "LocafotoTestSupport"]),
        .testTarget(
            name: "LocafotoLocalSendTests", dependencies: ["LocafotoErrors", "LocafotoLocalSend", "LocafotoFormats"]),
        .testTarget(name: "LocafotoControlTests", dependencies: ["LocafotoControl", "LocafotoTestSupport"]),
        .testTarget(name: "LocafotoQueryTests", dependencies: ["LocafotoQuery", "LocafotoErrors"]),
        .testTarget(name: "LocafotoWebTests", dependencies: ["LocafotoWeb", "LocafotoTestSupport"]),
        .testTarget(
            name: "LocafotoMediaTests", dependencies: ["LocafotoErrors", "LocafotoMedia", "LocafotoFormats"],
            resources: [.copy("Fixtures")]),
        // Runs the built `locafoto media-worker` (a sibling of the test bundle) and stand-ins.
        .testTarget(
            name: "LocafotoMediaWorkerTests",
            dependencies: ["LocafotoMediaWorker", "LocafotoMedia", "LocafotoFormats", "LocafotoTestSupport"]),
        .testTarget(
            name: "LocafotoRelayTests",
            dependencies: ["LocafotoRelay", "LocafotoWire", "LocafotoFormats", "LocafotoCrypto", "LocafotoFiles"]),
        // The session layer without an agent: the frame decoder drip-fed, handshakes over
        // in-memory channels.
        .testTarget(
            name: "LocafotoSessionTests",
            dependencies: [
                "LocafotoSession", "LocafotoWire", "LocafotoFormats", "LocafotoCrypto", "LocafotoNoise",
                "LocafotoTestSupport",
                nioCore, nioPosix, logging,
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOTestUtils", package: "swift-nio"),
            ]),
        .testTarget(
            name: "LocafotoAgentTests",
            dependencies: [
                "LocafotoAgent", "LocafotoSession", "LocafotoWire", "LocafotoFormats", "LocafotoCrypto",
                "LocafotoVault", "LocafotoRelay", "LocafotoControl", "LocafotoDesktop", "LocafotoTestSupport",
                "LocafotoClock", "LocafotoNode", "LocafotoPeers", "LocafotoDiscovery", "LocafotoMedia",
                "LocafotoReceiving", "LocafotoSending", "LocafotoTransfers", "LocafotoInbox", "LocafotoRelayServer",
                "LocafotoControlServer", "LocafotoErrors", grdb, nioCore, logging,
            ]),
    ],
    swiftLanguageModes: [.v6]
)

// A strict build: a warning in any of our own Swift targets fails it (dependencies are not
// ours to fix). A file sees the members of only the modules it imports itself
// (MemberImportVisibility), so its imports say what it uses. scripts/check-imports.py checks
// that each target imports exactly the direct dependencies declared above, no more, no fewer.
for target in package.targets where target.type != .system {
    target.swiftSettings =
        (target.swiftSettings ?? []) + [
            .treatAllWarnings(as: .error), .enableUpcomingFeature("MemberImportVisibility"),
        ]
}

// The tests are built in the release configuration with the code they test (scripts/test.sh:
// one build for everything); optimising the tests themselves would only make it slower.
for target in package.targets where target.type == .test || target.name == "LocafotoTestSupport" {
    target.swiftSettings = (target.swiftSettings ?? []) + [.unsafeFlags(["-Onone"], .when(configuration: .release))]
}
