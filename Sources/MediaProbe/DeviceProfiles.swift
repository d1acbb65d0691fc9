/// What one family of Cast devices decodes, with where each limit comes from.
///
/// Figures are from Google's "Supported Media for Google Cast" page as far as it could be read,
/// and, past that, from sources quoting it (see `Source`); each limit names its source so a
/// verdict can be traced. Unknown models should be judged against the strictest profile.
public struct DeviceProfile: Sendable, Hashable, Codable, Identifiable {
    /// Where a limit comes from.
    public enum Source: String, Sendable, Hashable, Codable {
        /// Read on developers.google.com/cast/docs/media.
        case googleDocs = "google-docs"
        /// Quoted from that page by receiver tables in public code (cast_convert, Shaka, others).
        case quotedDocs = "quoted-docs"
        /// Consumer specifications, reviews or issue reports.
        case field
        /// CastPrep's own conservative reading where sources disagree or are silent.
        case inference
    }

    /// A video codec limit.
    public struct VideoLimit: Sendable, Hashable, Codable {
        /// FFmpeg codec name: `h264`, `hevc`, `vp8`, `vp9`, `av1`.
        public var codec: String
        /// Allowed profiles by FFmpeg's name (`High`, `Main 10`…); empty means any 8-bit 4:2:0 one.
        public var profiles: [String]
        /// Highest level as FFmpeg reports it (H.264 level_idc 42 = 4.2; HEVC 153 = 5.1; VP9 51).
        public var maxLevel: Int?
        public var maxWidth: Int
        public var maxHeight: Int
        public var maxFrameRate: Double
        public var source: Source
    }

    public var id: String
    public var name: String
    public var video: [VideoLimit]
    /// Whether the device has a screen at all.
    public var hasVideo: Bool
    /// HDR transfers it shows (`PQ`, `HLG`); empty for SDR-only devices.
    public var hdr: [String]
    public var dolbyVision: Bool
    /// Whether the device outputs over HDMI (AC-3/E-AC-3 and multichannel then depend on the TV).
    public var hasHDMI: Bool
    /// Whether 5.1 AAC was removed from this device (firmware 1.28, Google issue tracker 69088762).
    public var droppedMultichannelAAC: Bool
    public var source: Source

    /// Every profile CastPrep judges against, newest last.
    public static let all: [DeviceProfile] = [
        DeviceProfile(
            id: "chromecast-gen1-2", name: "Chromecast (1st and 2nd gen)",
            video: [
                VideoLimit(
                    codec: "h264", profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: 41,
                    maxWidth: 1920,
                    maxHeight: 1080, maxFrameRate: 30, source: .googleDocs),
                VideoLimit(
                    codec: "vp8", profiles: [], maxLevel: nil, maxWidth: 1920, maxHeight: 1080, maxFrameRate: 30,
                    source: .googleDocs),
            ],
            hasVideo: true, hdr: [], dolbyVision: false, hasHDMI: true, droppedMultichannelAAC: true,
            source: .googleDocs),
        DeviceProfile(
            id: "chromecast-gen3", name: "Chromecast (3rd gen)",
            video: [
                VideoLimit(
                    codec: "h264", profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: 42,
                    maxWidth: 1920,
                    maxHeight: 1080, maxFrameRate: 60, source: .googleDocs),
                VideoLimit(
                    codec: "vp8", profiles: [], maxLevel: nil, maxWidth: 1920, maxHeight: 1080, maxFrameRate: 30,
                    source: .googleDocs),
            ],
            hasVideo: true, hdr: [], dolbyVision: false, hasHDMI: true, droppedMultichannelAAC: false,
            source: .googleDocs),
        DeviceProfile(
            id: "chromecast-ultra", name: "Chromecast Ultra",
            video: [
                VideoLimit(
                    codec: "h264", profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: 42,
                    maxWidth: 1920,
                    maxHeight: 1080, maxFrameRate: 60, source: .googleDocs),
                VideoLimit(
                    codec: "hevc", profiles: ["Main", "Main 10"], maxLevel: 153, maxWidth: 3840, maxHeight: 2160,
                    maxFrameRate: 60,
                    source: .quotedDocs),
                VideoLimit(
                    codec: "vp8", profiles: [], maxLevel: nil, maxWidth: 3840, maxHeight: 2160, maxFrameRate: 30,
                    source: .googleDocs),
                VideoLimit(
                    codec: "vp9", profiles: ["Profile 0", "Profile 2"], maxLevel: 51, maxWidth: 3840, maxHeight: 2160,
                    maxFrameRate: 60, source: .quotedDocs),
            ],
            hasVideo: true, hdr: ["PQ"], dolbyVision: true, hasHDMI: true, droppedMultichannelAAC: true,
            source: .quotedDocs),
        DeviceProfile(
            id: "google-tv-hd", name: "Chromecast with Google TV (HD)",
            video: [
                VideoLimit(
                    codec: "h264", profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: 42,
                    maxWidth: 1920,
                    maxHeight: 1080, maxFrameRate: 60, source: .inference),
                VideoLimit(
                    codec: "hevc", profiles: ["Main", "Main 10"], maxLevel: 123, maxWidth: 1920, maxHeight: 1080,
                    maxFrameRate: 60,
                    source: .inference),
                VideoLimit(
                    codec: "vp9", profiles: ["Profile 0", "Profile 2"], maxLevel: 41, maxWidth: 1920, maxHeight: 1080,
                    maxFrameRate: 60, source: .inference),
                VideoLimit(
                    codec: "av1", profiles: ["Main"], maxLevel: 9, maxWidth: 1920, maxHeight: 1080, maxFrameRate: 60,
                    source: .field),
            ],
            hasVideo: true, hdr: ["PQ", "HLG"], dolbyVision: false, hasHDMI: true, droppedMultichannelAAC: false,
            source: .field),
        DeviceProfile(
            id: "google-tv-4k", name: "Chromecast with Google TV (4K)",
            video: [
                VideoLimit(
                    codec: "h264", profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: 51,
                    maxWidth: 4096,
                    maxHeight: 2160, maxFrameRate: 30, source: .quotedDocs),
                VideoLimit(
                    codec: "hevc", profiles: ["Main", "Main 10"], maxLevel: 153, maxWidth: 4096, maxHeight: 2160,
                    maxFrameRate: 60,
                    source: .quotedDocs),
                VideoLimit(
                    codec: "vp9", profiles: ["Profile 0", "Profile 2"], maxLevel: 51, maxWidth: 4096, maxHeight: 2160,
                    maxFrameRate: 60, source: .quotedDocs),
            ],
            hasVideo: true, hdr: ["PQ", "HLG"], dolbyVision: true, hasHDMI: true, droppedMultichannelAAC: false,
            source: .quotedDocs),
        DeviceProfile(
            id: "google-tv-streamer", name: "Google TV Streamer",
            video: [
                VideoLimit(
                    codec: "h264", profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: 52,
                    maxWidth: 4096,
                    maxHeight: 2160, maxFrameRate: 60, source: .quotedDocs),
                VideoLimit(
                    codec: "hevc", profiles: ["Main", "Main 10"], maxLevel: 153, maxWidth: 4096, maxHeight: 2160,
                    maxFrameRate: 60,
                    source: .quotedDocs),
                VideoLimit(
                    codec: "vp9", profiles: ["Profile 0", "Profile 2"], maxLevel: 51, maxWidth: 4096, maxHeight: 2160,
                    maxFrameRate: 60, source: .quotedDocs),
                VideoLimit(
                    codec: "av1", profiles: ["Main"], maxLevel: 13, maxWidth: 4096, maxHeight: 2160, maxFrameRate: 60,
                    source: .quotedDocs),
            ],
            hasVideo: true, hdr: ["PQ", "HLG"], dolbyVision: true, hasHDMI: true, droppedMultichannelAAC: false,
            source: .quotedDocs),
        DeviceProfile(
            id: "nest-hub", name: "Google Nest Hub",
            video: [
                VideoLimit(
                    codec: "h264", profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: 41,
                    maxWidth: 1280,
                    maxHeight: 720, maxFrameRate: 60, source: .quotedDocs),
                VideoLimit(
                    codec: "vp9", profiles: ["Profile 0"], maxLevel: 40, maxWidth: 1280, maxHeight: 720,
                    maxFrameRate: 60,
                    source: .quotedDocs),
            ],
            hasVideo: true, hdr: [], dolbyVision: false, hasHDMI: false, droppedMultichannelAAC: false,
            source: .quotedDocs),
        DeviceProfile(
            // Sources disagree on 720p60 and 720p30; CastPrep takes the stricter one.
            id: "nest-hub-max", name: "Google Nest Hub Max",
            video: [
                VideoLimit(
                    codec: "h264", profiles: ["Constrained Baseline", "Baseline", "Main", "High"], maxLevel: 41,
                    maxWidth: 1280,
                    maxHeight: 720, maxFrameRate: 30, source: .inference),
                VideoLimit(
                    codec: "vp9", profiles: ["Profile 0"], maxLevel: 40, maxWidth: 1280, maxHeight: 720,
                    maxFrameRate: 30,
                    source: .inference),
            ],
            hasVideo: true, hdr: [], dolbyVision: false, hasHDMI: false, droppedMultichannelAAC: false,
            source: .inference),
        DeviceProfile(
            id: "audio", name: "Audio devices (Nest Audio, Nest Mini, Google Home, speaker groups)",
            video: [], hasVideo: false, hdr: [], dolbyVision: false, hasHDMI: false, droppedMultichannelAAC: false,
            source: .quotedDocs),
    ]

    /// The profile of a device that announces `model` (its mDNS `md`, eureka_info
    /// `model_name`), or a profile's own id or name. "Chromecast" is the name the 1st to 3rd
    /// generation dongles share; it maps to the 3rd generation, the one still sold longest.
    /// Other names no table lists get nil: judge those against the strictest profile, as
    /// preflight does.
    ///
    /// ```swift
    /// DeviceProfile.matching(model: "Chromecast Ultra")?.id   // "chromecast-ultra"
    /// DeviceProfile.matching(model: "Google Nest Mini")?.id   // "audio"
    /// ```
    public static func matching(model: String) -> DeviceProfile? {
        let key = model.lowercased()
        if let profile = all.first(where: { $0.id == key || $0.name.lowercased() == key }) { return profile }
        let byModelName: [String: String] = [
            "chromecast": "chromecast-gen3",
            "chromecast ultra": "chromecast-ultra",
            "chromecast hd": "google-tv-hd",
            "chromecast with google tv": "google-tv-4k",
            "google tv streamer": "google-tv-streamer",
            "google nest hub": "nest-hub",
            "nest hub": "nest-hub",
            "google nest hub max": "nest-hub-max",
            "chromecast audio": "audio",
            "google home": "audio",
            "google home mini": "audio",
            "google home max": "audio",
            "google nest mini": "audio",
            "nest audio": "audio",
            "google cast group": "audio",
        ]
        guard let id = byModelName[key] else { return nil }
        return all.first { $0.id == id }
    }

    /// The profile with the strictest limits, for devices no profile names.
    public static var strictest: DeviceProfile { all[0] }

    /// Looks profiles up by id; unknown ids are returned separately.
    public static func select(_ ids: [String]) -> (profiles: [DeviceProfile], unknown: [String]) {
        var profiles: [DeviceProfile] = []
        var unknown: [String] = []
        for id in ids {
            if let profile = all.first(where: { $0.id == id }) { profiles.append(profile) } else { unknown.append(id) }
        }
        return (profiles, unknown)
    }
}
