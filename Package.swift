// swift-tools-version:6.2
// CastPrep: make a media library castable, then cast it.
//
// Layout (see ARCHITECTURE.md): one module per concern, C libraries only in leaf
// `C*` system-library targets, dependencies pointing one way towards `CastModel`.
import PackageDescription

let package = Package(
    name: "CastPrep",
    products: [
        .executable(name: "castprep", targets: ["castprep"]),
        .library(name: "CodedErrors", targets: ["CodedErrors"]),
        .library(name: "SystemIO", targets: ["SystemIO"]),
        .library(name: "Hashing", targets: ["Hashing"]),
        .library(name: "JSONSupport", targets: ["JSONSupport"]),
        .library(name: "Spelling", targets: ["Spelling"]),
        .library(name: "CastModel", targets: ["CastModel"]),
        .library(name: "Catalog", targets: ["Catalog"]),
        .library(name: "CommandParsing", targets: ["CommandParsing"]),
        .library(name: "Captions", targets: ["Captions"]),
        .library(name: "StreamingFormats", targets: ["StreamingFormats"]),
        .library(name: "MediaProbe", targets: ["MediaProbe"]),
        .library(name: "Preflight", targets: ["Preflight"]),
        .library(name: "HTTPCheck", targets: ["HTTPCheck"]),
        .library(name: "MediaServer", targets: ["MediaServer"]),
        .library(name: "CastSender", targets: ["CastSender"]),
        .library(name: "CastChannel", targets: ["CastChannel"]),
        .library(name: "CastReceiver", targets: ["CastReceiver"]),
        .library(name: "CastDiscovery", targets: ["CastDiscovery"]),
        .library(name: "CastReceiverRuntime", targets: ["CastReceiverRuntime"]),
        .library(name: "CastDevices", targets: ["CastDevices"]),
        .library(name: "IOSAppCheck", targets: ["IOSAppCheck"]),
        .library(name: "Logging", targets: ["Logging"]),
        .library(name: "NowPlaying", targets: ["NowPlaying"]),
        .library(name: "RemoteControl", targets: ["RemoteControl"]),
    ],
    targets: [
        // MARK: - C system libraries (Debian 12 -dev packages, found through pkg-config)
        // No pkgConfig for FFmpeg: it would add -lavformat to every program, and CFFmpeg.h loads
        // FFmpeg at run time instead (Debian's headers are on the default include path).
        .systemLibrary(
            name: "CFFmpeg", path: "Sources/CShims/CFFmpeg",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev"])]),
        // No pkgConfig for libxml2 either (it would link it): CLibXML2.h loads it when XML is
        // read; its headers' folder is on every target's include path (see the end of this file).
        .systemLibrary(
            name: "CLibXML2", path: "Sources/CShims/CLibXML2",
            providers: [.apt(["libxml2-dev"])]),
        // No pkgConfig for libcurl and libmicrohttpd either: CCurl.h and CMicroHTTPD.h load them
        // on first use, so that starting castprep does not load them and their ~30 dependencies.
        .systemLibrary(
            name: "CCurl", path: "Sources/CShims/CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]),
        // No pkgConfig for OpenSSL either: COpenSSL.h loads it on the first TLS link or digest.
        .systemLibrary(
            name: "COpenSSL", path: "Sources/CShims/COpenSSL",
            providers: [.apt(["libssl-dev"])]),
        // No pkgConfig for SQLite either: CSQLite.h loads it when preflight opens its cache.
        .systemLibrary(
            name: "CSQLite", path: "Sources/CShims/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(
            name: "CMicroHTTPD", path: "Sources/CShims/CMicroHTTPD",
            providers: [.apt(["libmicrohttpd-dev"])]),
        // No pkgConfig for libplist either: CPlist.h loads it when an Info.plist is read.
        .systemLibrary(
            name: "CPlist", path: "Sources/CShims/CPlist",
            providers: [.apt(["libplist-dev"])]),
        // No pkgConfig for sd-bus either: CSDBus.h loads libsystemd when castprep nowplaying starts.
        .systemLibrary(
            name: "CSDBus", path: "Sources/CShims/CSDBus",
            providers: [.apt(["libsystemd-dev"])]),

        // MARK: - Swift modules
        // The bottom of the stack: threads, wake pipes, the poll timeout rule, blocking work,
        // termination signals and the batched line writer, on the C library alone.
        // The very bottom: the coded-error protocol, its renderer and the diagnostic code, on the
        // standard library alone, so that every module, SystemIO included, can conform.
        .target(name: "CodedErrors"),
        .target(name: "SystemIO", dependencies: ["CodedErrors"]),
        // SHA-256 through OpenSSL, once for every module: certificate fingerprints, catalog digests.
        .target(name: "Hashing", dependencies: ["COpenSSL"]),
        .target(name: "JSONSupport", dependencies: ["CodedErrors", "SystemIO"]),
        .target(name: "Spelling"),
        // One logger for every module: per-component filters, one line format, a handler hook.
        .target(name: "Logging", dependencies: ["SystemIO", "Spelling"]),
        // MPRIS players on the session bus for Cast sessions (`castprep nowplaying`).
        .target(name: "NowPlaying", dependencies: ["CastModel", "CastSender", "Logging", "SystemIO", "CSDBus"]),
        .target(name: "CastModel", dependencies: ["CodedErrors", "JSONSupport", "Spelling"]),
        .target(name: "Catalog", dependencies: ["CastModel", "JSONSupport", "SystemIO"]),
        .target(name: "CommandParsing", dependencies: ["CodedErrors", "Spelling", "SystemIO"]),
        .target(name: "Captions", dependencies: ["CastModel", "CLibXML2", "CFFmpeg", "SystemIO"]),
        .target(name: "StreamingFormats", dependencies: ["CodedErrors", "CLibXML2"]),
        .target(
            name: "MediaProbe", dependencies: ["CastModel", "CFFmpeg", "Hashing", "StreamingFormats", "SystemIO"]),
        .target(
            name: "HTTPCheck",
            dependencies: ["CastModel", "SystemIO", "CCurl", "StreamingFormats", "Logging", "Hashing"]),
        .target(
            name: "Preflight",
            dependencies: [
                "CastModel", "Catalog", "Captions", "JSONSupport", "MediaProbe", "HTTPCheck", "MediaServer", "SystemIO",
                "Hashing", "CSQLite",
            ]),
        .target(name: "MediaServer", dependencies: ["CastModel", "CMicroHTTPD", "SystemIO"]),
        .target(name: "CastSender", dependencies: ["CastModel", "JSONSupport", "CastChannel", "Logging"]),
        .target(
            name: "Casting",
            dependencies: [
                "CastModel", "Catalog", "Captions", "CastSender", "HTTPCheck", "JSONSupport", "MediaServer", "SystemIO",
            ]),
        .target(name: "CastChannel", dependencies: ["CastModel", "JSONSupport", "SystemIO", "Hashing", "COpenSSL"]),
        .target(name: "CastDiscovery", dependencies: ["CastModel", "SystemIO", "Logging"]),
        .target(name: "IOSAppCheck", dependencies: ["CastModel", "JSONSupport", "CPlist"]),
        // `castprep remote`'s controller without a terminal: layout and style files, keys, views, frame diffs.
        .target(name: "RemoteControl", dependencies: ["CastModel", "JSONSupport", "Spelling"]),
        .target(
            name: "CastDevices",
            dependencies: ["CastDiscovery", "CastChannel", "HTTPCheck", "CastModel", "JSONSupport", "SystemIO"]),
        .target(
            name: "CastPrepCommands",
            dependencies: [
                "CastModel", "Catalog", "Captions", "CommandParsing", "JSONSupport", "MediaProbe", "StreamingFormats",
                "HTTPCheck",
                "MediaServer", "Preflight",
                "CastReceiver", "CastReceiverRuntime", "CastDiscovery",
                "CastSender", "Casting",
                "CastDevices", "IOSAppCheck", "SystemIO", "Logging", "NowPlaying", "RemoteControl",
            ]),
        .executableTarget(name: "castprep", dependencies: ["CastPrepCommands"]),
        .target(name: "CastReceiver", dependencies: ["CastModel", "JSONSupport"]),
        .target(
            name: "CastReceiverRuntime",
            dependencies: [
                "CastReceiver", "CastChannel", "CastDiscovery", "HTTPCheck", "MediaServer", "MediaProbe",
                "StreamingFormats", "CastModel",
                "JSONSupport", "SystemIO", "Logging",
            ]),

        // MARK: - Tests
        .testTarget(
            name: "CodedErrorsTests",
            dependencies: [
                "CodedErrors", "JSONSupport", "SystemIO", "CastModel", "Catalog", "CommandParsing", "Captions",
                "StreamingFormats",
                "MediaProbe", "HTTPCheck", "MediaServer", "Preflight", "CastChannel", "CastSender", "Casting",
                "CastReceiver",
                "CastReceiverRuntime", "CastDiscovery", "CastDevices",
            ]),
        .testTarget(name: "SystemIOTests", dependencies: ["SystemIO"]),
        .testTarget(name: "HashingTests", dependencies: ["Hashing"]),
        .testTarget(name: "JSONSupportTests", dependencies: ["JSONSupport", "TestSupport"]),
        .testTarget(name: "CastModelTests", dependencies: ["CastModel", "JSONSupport", "TestSupport"]),
        .testTarget(name: "SpellingTests", dependencies: ["Spelling"]),
        .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
        .testTarget(name: "NowPlayingTests", dependencies: ["NowPlaying", "CastModel", "JSONSupport"]),
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .target(
            name: "CastTestSupport", dependencies: ["CastChannel", "CastModel", "JSONSupport"],
            path: "Tests/CastTestSupport"),
        .testTarget(
            name: "CatalogTests", dependencies: ["Catalog", "CastModel", "JSONSupport", "TestSupport"],
            exclude: ["Snapshots"]),
        .testTarget(name: "CommandParsingTests", dependencies: ["CommandParsing"]),
        .testTarget(
            name: "MediaProbeTests",
            dependencies: ["MediaProbe", "StreamingFormats", "CastModel", "JSONSupport", "TestSupport"],
            exclude: ["Snapshots", "Support"]),
        .testTarget(
            name: "CaptionsTests", dependencies: ["Captions", "CastModel", "TestSupport"],
            resources: [.copy("Fixtures"), .copy("Snapshots")]),
        .testTarget(
            name: "CastPrepCommandsTests",
            dependencies: [
                "CastPrepCommands", "CommandParsing", "CastModel", "JSONSupport", "TestSupport", "CastChannel",
                "MediaServer", "CastTestSupport",
            ],
            exclude: ["Snapshots"]),
        .testTarget(
            name: "CastDiscoveryTests", dependencies: ["CastDiscovery", "CastModel", "SystemIO", "TestSupport"],
            exclude: ["Snapshots"]),
        .testTarget(
            name: "CastDevicesTests",
            dependencies: [
                "CastDevices", "CastDiscovery", "CastChannel", "CastModel", "JSONSupport", "SystemIO", "TestSupport",
                "CastTestSupport",
            ],
            exclude: ["Snapshots"]),
        .testTarget(
            name: "PreflightTests",
            dependencies: [
                "Preflight", "CastModel", "JSONSupport", "TestSupport", "Catalog", "MediaProbe", "MediaServer",
                "SystemIO",
            ]),
        .testTarget(name: "MediaServerTests", dependencies: ["MediaServer", "CastModel", "TestSupport"]),
        .testTarget(name: "StreamingFormatsTests", dependencies: ["StreamingFormats", "TestSupport"]),
        .testTarget(
            name: "HTTPCheckTests",
            dependencies: ["HTTPCheck", "StreamingFormats", "CastModel", "JSONSupport", "TestSupport"],
            exclude: ["Snapshots"]),
        .testTarget(
            name: "CastSenderTests", dependencies: ["CastSender", "CastModel", "JSONSupport", "TestSupport"],
            exclude: ["Snapshots"]),
        .testTarget(
            name: "CastChannelTests", dependencies: ["CastChannel", "CastModel", "JSONSupport", "TestSupport"]),
        .testTarget(
            name: "CastReceiverTests", dependencies: ["CastReceiver", "CastModel", "JSONSupport", "TestSupport"],
            exclude: ["Snapshots"]),
        .testTarget(
            name: "CastReceiverRuntimeTests",
            dependencies: [
                "CastReceiverRuntime", "CastReceiver", "CastChannel", "CastDiscovery", "HTTPCheck", "MediaServer",
                "MediaProbe", "CastModel",
                "JSONSupport", "TestSupport", "CastTestSupport",
            ],
            exclude: ["Support"]),
        .testTarget(
            name: "CastingTests",
            dependencies: [
                "Casting", "CastSender", "CastChannel", "CastReceiverRuntime", "CastReceiver", "CastDiscovery",
                "MediaServer", "CastModel",
                "JSONSupport", "TestSupport", "HTTPCheck",
            ]),
        .testTarget(name: "IOSAppCheckTests", dependencies: ["IOSAppCheck", "CastModel", "TestSupport"]),
        .testTarget(
            name: "RemoteControlTests",
            dependencies: ["RemoteControl", "CastModel", "JSONSupport", "SystemIO", "TestSupport"],
            exclude: ["Snapshots"]),
        .testTarget(
            name: "SystemLibraryTests",
            dependencies: ["CFFmpeg", "CLibXML2", "CCurl", "COpenSSL", "CSQLite", "CMicroHTTPD", "CSDBus"]),
    ],
    swiftLanguageModes: [.v6]
)

// Settings every Swift target shares: Swift 6 strict concurrency plus the upcoming
// features that make imports and existentials explicit.
for target in package.targets where [.executable, .test, .regular].contains(target.type) {
    var settings = target.swiftSettings ?? []
    settings.append(.enableUpcomingFeature("ExistentialAny"))
    settings.append(.enableUpcomingFeature("MemberImportVisibility"))
    settings.append(.enableUpcomingFeature("InternalImportsByDefault"))
    settings.append(.enableUpcomingFeature("NonisolatedNonsendingByDefault"))
    // libxml2's headers live in a folder of their own (what `pkg-config --cflags libxml-2.0`
    // says on Debian); the library itself is loaded at run time by CLibXML2.h.
    settings.append(.unsafeFlags(["-Xcc", "-I/usr/include/libxml2"]))
    target.swiftSettings = settings
}
