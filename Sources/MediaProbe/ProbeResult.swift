public import StreamingFormats

/// What probing one media file found: the facts a Cast LOAD and a device verdict need.
public struct ProbeResult: Sendable, Hashable {
    /// The path or URL probed.
    public var source: String
    /// FFmpeg's demuxer name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`, `matroska,webm`, `mpegts`.
    public var formatName: String
    /// The container as Cast names it: `mp4`, `webm`, `matroska`, `mpegts`, `mp3`, `flac`, `ogg`…
    public var container: String
    /// The Cast `contentType`, with RFC 6381 codecs when every codec string is known:
    /// `video/mp4; codecs="avc1.640028, mp4a.40.2"`.
    public var contentType: String
    /// Seconds of media, from the audio and video streams (a subtitle running past the end does
    /// not count); nil when the container does not say.
    public var duration: Double?
    /// Overall bit rate in bits per second.
    public var bitRate: Int?
    /// For MP4/MOV: whether `moov` comes before `mdat`, so playback can start after one read.
    public var isFastStart: Bool?
    /// Every stream, in file order.
    public var streams: [StreamInfo]
    /// For HLS: the ladder, renditions and segment packaging (local playlists).
    public var hls: HLSInfo?
    /// For DASH: the adaptation sets and representations (local manifests).
    public var dash: DASHManifest?
    /// `LIVE` for live HLS (no end list), else `BUFFERED`.
    public var streamType: String { hls?.isLive == true || dash?.isLive == true ? "LIVE" : "BUFFERED" }

    /// Creates a result.
    public init(
        source: String, formatName: String, container: String, contentType: String, duration: Double?,
        bitRate: Int?, isFastStart: Bool?, streams: [StreamInfo]
    ) {
        self.source = source
        self.formatName = formatName
        self.container = container
        self.contentType = contentType
        self.duration = duration
        self.bitRate = bitRate
        self.isFastStart = isFastStart
        self.streams = streams
    }

    /// The video streams (attached pictures such as cover art excluded).
    public var videoStreams: [StreamInfo] { streams.filter { $0.kind == .video && !$0.isAttachedPicture } }
    /// The audio streams.
    public var audioStreams: [StreamInfo] { streams.filter { $0.kind == .audio } }
    /// The subtitle streams.
    public var subtitleStreams: [StreamInfo] { streams.filter { $0.kind == .subtitle } }
}

/// What an HLS stream is made of, and the LOAD fields it needs.
public struct HLSInfo: Sendable, Hashable {
    public var variants: [HLSVariant]
    public var renditions: [HLSRendition]
    /// Packaging of the variant (video) segments.
    public var videoPackaging: HLSPackaging?
    /// Packaging of the separate audio rendition segments, when there are any.
    public var audioPackaging: HLSPackaging?
    public var isLive: Bool
    /// Every codec string the master lists.
    public var codecs: [String] { Array(Set(variants.flatMap(\.codecs))).sorted() }

    /// The LOAD's `hlsVideoSegmentFormat`: `mpeg2_ts` or `fmp4`.
    public var hlsVideoSegmentFormat: String? {
        switch videoPackaging {
        case .ts: "mpeg2_ts"
        case .fmp4: "fmp4"
        default: nil
        }
    }

    /// The LOAD's `hlsSegmentFormat` (audio): from the audio renditions if separate, else from
    /// the muxed segments.
    public var hlsSegmentFormat: String? {
        switch audioPackaging ?? videoPackaging {
        case .ts: "ts"
        case .fmp4: "fmp4"
        case .aac: "aac"
        case .ac3: "ac3"
        case .eac3: "e-ac3"
        case .mp3: "mp3"
        default: nil
        }
    }
}

/// One stream of a media file.
public struct StreamInfo: Sendable, Hashable {
    /// What the stream carries.
    public enum Kind: String, Sendable, Hashable, Codable {
        case video, audio, subtitle, data, attachment, unknown
    }

    /// Position in the file (FFmpeg's stream index).
    public var index: Int
    public var kind: Kind
    /// FFmpeg's codec name: `h264`, `hevc`, `aac`, `subrip`…
    public var codec: String
    /// The RFC 6381 codec string, when it can be derived: `avc1.640028`, `mp4a.40.2`.
    public var codecString: String?
    /// Profile name: `High`, `Main 10`, `LC`…
    public var profile: String?
    /// Codec level as FFmpeg reports it (H.264 level_idc, e.g. 40; HEVC general_level_idc, e.g. 120).
    public var level: Int?
    /// BCP 47 or ISO 639-2 language from the container.
    public var language: String?
    /// Whether the stream is marked default.
    public var isDefault: Bool
    /// Whether the stream is marked forced (subtitles).
    public var isForced: Bool
    /// Whether this is cover art rather than moving video.
    public var isAttachedPicture: Bool
    // Video.
    public var width: Int?
    public var height: Int?
    /// Frames per second (average).
    public var frameRate: Double?
    public var bitDepth: Int?
    /// Chroma subsampling: `4:2:0`, `4:2:2`, `4:4:4`.
    public var chroma: String?
    /// `PQ` (HDR10, Dolby Vision) or `HLG`, nil for SDR.
    public var hdrTransfer: String?
    /// Dolby Vision profile, when the stream carries a DOVI configuration.
    public var dolbyVisionProfile: Int?
    // Audio.
    public var channels: Int?
    /// FFmpeg's layout name: `stereo`, `5.1`…
    public var channelLayout: String?
    public var sampleRate: Int?
    // Subtitles.
    /// Whether the subtitle stream is text (convertible to WebVTT) rather than bitmaps.
    public var isTextSubtitle: Bool?

    /// Creates a stream description.
    public init(index: Int, kind: Kind, codec: String) {
        self.index = index
        self.kind = kind
        self.codec = codec
        self.isDefault = false
        self.isForced = false
        self.isAttachedPicture = false
    }
}
