public import CastModel

/// A receiver app the emulated device can launch.
public struct InstalledApp: Sendable, Hashable {
    public var appID: String
    public var displayName: String
    /// Namespaces listed in RECEIVER_STATUS (`[{"name": …}]`).
    public var namespaces: [CastNamespace]
    /// Whether the app is a media player the device emulates (the Default Media Receiver's
    /// semantics on the media namespace).
    public var playsMedia: Bool
    /// Whether an Android TV version is installed: a LAUNCH whose `supportedAppTypes` includes
    /// `ANDROID_TV` then starts it (Cast Connect) and RECEIVER_STATUS says `appType: ANDROID_TV`.
    public var hasAndroidTVVersion: Bool

    /// Creates an app entry.
    public init(
        appID: String, displayName: String, namespaces: [CastNamespace] = [.media], playsMedia: Bool = true,
        hasAndroidTVVersion: Bool = false
    ) {
        self.appID = appID
        self.displayName = displayName
        self.namespaces = namespaces
        self.playsMedia = playsMedia
        self.hasAndroidTVVersion = hasAndroidTVVersion
    }

    /// The Default Media Receiver, `CC1AD845`.
    public static let defaultMediaReceiver = InstalledApp(
        appID: LaunchRequest.defaultMediaReceiverAppID, displayName: "Default Media Receiver")
    /// Backdrop, the idle-screen app (`E8C28D3C`); it has no media namespace.
    public static let backdrop = InstalledApp(
        appID: "E8C28D3C", displayName: "Backdrop", namespaces: [], playsMedia: false)
}

/// How the emulated device behaves: its apps, its volume, its timings and its randomness.
///
/// Everything the state machine could otherwise take from the environment is here, so a
/// test fixes it once and gets the same session ids, shuffles and timings on every run.
public struct ReceiverConfiguration: Sendable, Hashable {
    /// Apps a LAUNCH can start; any other app id gets LAUNCH_ERROR NOT_FOUND.
    public var installedApps: [InstalledApp]
    /// The device volume at start.
    public var volume: CastVolume
    /// The `Origin` the receiver page sends when it fetches media (the Default Media
    /// Receiver is served from www.gstatic.com).
    public var origin: String
    /// How long the player stays BUFFERING after the media answered, before PLAYING.
    public var bufferingTime: Duration
    /// Seeds session ids and shuffles. Fix it in tests; leave the default (random) otherwise.
    public var seed: UInt64
    /// Whether media on 127.0.0.1 / localhost may be fetched. A real device resolves those to
    /// itself and fails; the emulator runs on the sender's machine, where they work, so
    /// tests that serve media on loopback turn this on.
    public var loopbackMediaIsReachable: Bool

    /// Creates a configuration.
    public init(
        installedApps: [InstalledApp] = [.defaultMediaReceiver, .backdrop],
        volume: CastVolume = CastVolume(level: 1, muted: false, controlType: "attenuation", stepInterval: 0.05),
        origin: String = "https://www.gstatic.com", bufferingTime: Duration = .milliseconds(500),
        seed: UInt64 = UInt64.random(in: 0...UInt64.max), loopbackMediaIsReachable: Bool = false
    ) {
        self.installedApps = installedApps
        self.volume = volume
        self.origin = origin
        self.bufferingTime = bufferingTime
        self.seed = seed
        self.loopbackMediaIsReachable = loopbackMediaIsReachable
    }
}

/// A SplitMix64 generator: the device's only source of randomness (session ids, shuffles),
/// seeded from ``ReceiverConfiguration/seed`` so runs reproduce.
struct DeviceRandom: RandomNumberGenerator, Sendable, Hashable {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }

    /// A random (version 4) UUID in lower-case 8-4-4-4-12 form, as devices write session ids.
    mutating func uuid() -> String {
        var bytes: [UInt8] = []
        for _ in 0..<2 {
            let word = next()
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x40
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let hex = bytes.map { byte -> String in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        let groups = [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]]
        return groups.map { $0.joined() }.joined(separator: "-")
    }
}
