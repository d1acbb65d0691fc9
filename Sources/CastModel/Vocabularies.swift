import JSONSupport

/// An open Cast wire vocabulary: a string enum whose unknown values still decode.
///
/// Receivers gain new values over time (a new `streamType`, a new `hdrType`), so CastPrep
/// keeps whatever it reads and lets the validator say whether a value is one it knows.
public protocol CastVocabulary: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
where RawValue == String {
    init(rawValue: String)
    /// Every value documented for this vocabulary.
    static var knownValues: [Self] { get }
}

extension CastVocabulary {
    public init(stringLiteral value: String) { self.init(rawValue: value) }
    public var description: String { rawValue }
    /// Whether the value is one the Cast documentation lists.
    public var isKnown: Bool { Self.knownValues.contains(self) }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The known values written as a list for messages: `BUFFERED, LIVE, NONE`.
    static var knownList: String { knownValues.map(\.rawValue).joined(separator: ", ") }
}

/// How the receiver treats the stream's timeline (`MediaInformation.streamType`).
public struct StreamType: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A file or VOD stream with a known duration; seekable.
    public static let buffered: Self = "BUFFERED"
    /// A live stream; duration -1 or absent.
    public static let live: Self = "LIVE"
    /// Neither; rarely right.
    public static let none: Self = "NONE"
    public static let knownValues: [Self] = [.buffered, .live, .none]
}

/// The kind of a `MediaTrack`.
public struct TrackType: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let text: Self = "TEXT"
    public static let audio: Self = "AUDIO"
    public static let video: Self = "VIDEO"
    public static let knownValues: [Self] = [.text, .audio, .video]
}

/// The role of a TEXT track (`MediaTrack.subtype`).
public struct TextTrackType: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let subtitles: Self = "SUBTITLES"
    public static let captions: Self = "CAPTIONS"
    public static let descriptions: Self = "DESCRIPTIONS"
    public static let chapters: Self = "CHAPTERS"
    public static let metadata: Self = "METADATA"
    public static let knownValues: [Self] = [.subtitles, .captions, .descriptions, .chapters, .metadata]

    /// The type a catalog names in any case (`captions`, `Subtitles`): its upper-case form.
    public init(anyCase name: String) {
        // Catalogs name the known types in lower case (CastVideos) or upper case: those are
        // looked up, not upper-cased into a new string, for every track of a catalog.
        self = Self.knownSpellings[name] ?? TextTrackType(rawValue: name.uppercased())
    }

    /// The known types, keyed by their lower- and upper-case names.
    private static let knownSpellings = ShortKeyTable(
        knownValues.flatMap { [($0.rawValue.lowercased(), $0), ($0.rawValue, $0)] })
}

/// `TextTrackStyle.edgeType`.
public struct TextTrackEdgeType: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let none: Self = "NONE"
    public static let outline: Self = "OUTLINE"
    public static let dropShadow: Self = "DROP_SHADOW"
    public static let raised: Self = "RAISED"
    public static let depressed: Self = "DEPRESSED"
    public static let knownValues: [Self] = [.none, .outline, .dropShadow, .raised, .depressed]
}

/// `TextTrackStyle.fontGenericFamily`.
public struct TextTrackFontGenericFamily: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let sansSerif: Self = "SANS_SERIF"
    public static let monospacedSansSerif: Self = "MONOSPACED_SANS_SERIF"
    public static let serif: Self = "SERIF"
    public static let monospacedSerif: Self = "MONOSPACED_SERIF"
    public static let casual: Self = "CASUAL"
    public static let cursive: Self = "CURSIVE"
    public static let smallCapitals: Self = "SMALL_CAPITALS"
    public static let knownValues: [Self] = [
        .sansSerif, .monospacedSansSerif, .serif, .monospacedSerif, .casual, .cursive, .smallCapitals,
    ]
}

/// `TextTrackStyle.fontStyle`.
public struct TextTrackFontStyle: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let normal: Self = "NORMAL"
    public static let bold: Self = "BOLD"
    public static let boldItalic: Self = "BOLD_ITALIC"
    public static let italic: Self = "ITALIC"
    public static let knownValues: [Self] = [.normal, .bold, .boldItalic, .italic]
}

/// `TextTrackStyle.windowType`.
public struct TextTrackWindowType: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let none: Self = "NONE"
    public static let normal: Self = "NORMAL"
    public static let roundedCorners: Self = "ROUNDED_CORNERS"
    public static let knownValues: [Self] = [.none, .normal, .roundedCorners]
}

/// How a queue repeats (`repeatMode`).
public struct RepeatMode: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let off: Self = "REPEAT_OFF"
    public static let all: Self = "REPEAT_ALL"
    public static let single: Self = "REPEAT_SINGLE"
    public static let allAndShuffle: Self = "REPEAT_ALL_AND_SHUFFLE"
    public static let knownValues: [Self] = [.off, .all, .single, .allAndShuffle]
}

/// What a queue is (`QueueData.queueType`).
public struct QueueType: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let album: Self = "ALBUM"
    public static let playlist: Self = "PLAYLIST"
    public static let audiobook: Self = "AUDIOBOOK"
    public static let radioStation: Self = "RADIO_STATION"
    public static let podcastSeries: Self = "PODCAST_SERIES"
    public static let tvSeries: Self = "TV_SERIES"
    public static let videoPlaylist: Self = "VIDEO_PLAYLIST"
    public static let liveTV: Self = "LIVE_TV"
    public static let movie: Self = "MOVIE"
    public static let knownValues: [Self] = [
        .album, .playlist, .audiobook, .radioStation, .podcastSeries, .tvSeries, .videoPlaylist, .liveTV, .movie,
    ]
}

/// Audio segment packaging of an HLS stream (`hlsSegmentFormat`).
///
/// Values from the Android `HlsSegmentFormat` constants; note `e-ac3` uses a hyphen.
public struct HLSSegmentFormat: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Packed AAC elementary stream.
    public static let aac: Self = "aac"
    /// Packed AC-3 elementary stream.
    public static let ac3: Self = "ac3"
    /// Packed E-AC-3 elementary stream.
    public static let eac3: Self = "e-ac3"
    /// Packed MP3 elementary stream.
    public static let mp3: Self = "mp3"
    /// MPEG-2 transport stream.
    public static let ts: Self = "ts"
    /// AAC in an MPEG-2 transport stream.
    public static let tsAAC: Self = "ts_aac"
    /// CMAF fragmented MP4.
    public static let fmp4: Self = "fmp4"
    public static let knownValues: [Self] = [.aac, .ac3, .eac3, .mp3, .ts, .tsAAC, .fmp4]
}

/// Video segment packaging of an HLS stream (`hlsVideoSegmentFormat`).
public struct HLSVideoSegmentFormat: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// MPEG-2 TS; carries H.264 only on Cast.
    public static let mpeg2TS: Self = "mpeg2_ts"
    /// Fragmented MP4; H.264 and HEVC.
    public static let fmp4: Self = "fmp4"
    public static let knownValues: [Self] = [.mpeg2TS, .fmp4]
}

/// `MediaInformation.mediaCategory`.
public struct MediaCategory: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let audio: Self = "AUDIO"
    public static let video: Self = "VIDEO"
    public static let image: Self = "IMAGE"
    public static let knownValues: [Self] = [.audio, .video, .image]
}

/// A receiver app platform in `LAUNCH.supportedAppTypes` (Cast Connect).
public struct ReceiverAppType: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A Web Receiver.
    public static let web: Self = "WEB"
    /// An Android TV app (Cast Connect).
    public static let androidTV: Self = "ANDROID_TV"
    public static let knownValues: [Self] = [.web, .androidTV]
}

/// `MediaStatus.playerState`.
public struct PlayerState: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let idle: Self = "IDLE"
    public static let buffering: Self = "BUFFERING"
    public static let paused: Self = "PAUSED"
    public static let playing: Self = "PLAYING"
    /// Only inside `extendedStatus`, while a LOAD is in progress.
    public static let loading: Self = "LOADING"
    public static let knownValues: [Self] = [.idle, .buffering, .paused, .playing, .loading]
}

/// `MediaStatus.idleReason`.
public struct IdleReason: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// A STOP request ended playback.
    public static let cancelled: Self = "CANCELLED"
    /// Playback failed.
    public static let error: Self = "ERROR"
    /// The media played to its end.
    public static let finished: Self = "FINISHED"
    /// A new LOAD replaced the media.
    public static let interrupted: Self = "INTERRUPTED"
    public static let knownValues: [Self] = [.cancelled, .error, .finished, .interrupted]
}

/// Where credentials in a LOAD or LAUNCH come from (`credentialsType`).
public struct CredentialsType: CastVocabulary {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let android: Self = "android"
    public static let iOS: Self = "ios"
    public static let web: Self = "web"
    /// Reserved for Google Assistant requests.
    public static let cloud: Self = "cloud"
    public static let knownValues: [Self] = [.android, .iOS, .web, .cloud]
}

/// `MediaMetadata.metadataType`: an integer vocabulary, open like the string ones.
public struct MetadataType: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public init(integerLiteral value: Int) { self.rawValue = value }

    public static let generic: Self = 0
    public static let movie: Self = 1
    public static let tvShow: Self = 2
    public static let musicTrack: Self = 3
    public static let photo: Self = 4
    public static let audiobookChapter: Self = 5
    public static let knownValues: [Self] = [.generic, .movie, .tvShow, .musicTrack, .photo, .audiobookChapter]

    /// The Cast name, such as `MOVIE`, or `unknown (7)`.
    public var name: String {
        switch rawValue {
        case 0: "GENERIC"
        case 1: "MOVIE"
        case 2: "TV_SHOW"
        case 3: "MUSIC_TRACK"
        case 4: "PHOTO"
        case 5: "AUDIOBOOK_CHAPTER"
        default: "unknown (\(rawValue))"
        }
    }

    /// Looks a type up by its Cast name (`MOVIE`, `tv_show`) or number (`"2"`).
    public init?(name: String) {
        let upper = name.uppercased()
        if let number = Int(upper) {
            self.init(rawValue: number)
            return
        }
        guard let match = Self.knownValues.first(where: { $0.name == upper || $0.name.filter { $0 != "_" } == upper })
        else { return nil }
        self = match
    }

    public var description: String { name }
    public var isKnown: Bool { Self.knownValues.contains(self) }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
