/// An HLS playlist (RFC 8216): a master playlist with variants and renditions, or a media
/// playlist with segments.
///
/// Read through ``HLSLines``, with its bounds: unknown tags are ignored as the RFC requires,
/// at most ``HLSLines/maximumLines`` lines are read, and lines longer than
/// ``HLSLines/maximumLineBytes`` are skipped. `#EXTINF` values outside
/// `0...`\(``HLSLines/maximumSegmentSeconds``) count as unknown (0) and are counted in
/// ``HLSMediaPlaylist/outOfRangeDurations``, so ``HLSMediaPlaylist/duration`` stays finite.
public enum HLSPlaylist: Sendable, Hashable {
    case master(HLSMasterPlaylist)
    case media(HLSMediaPlaylist)

    /// Parses playlist text. Returns nil when the text does not start with `#EXTM3U`.
    public static func parse(_ text: String) -> HLSPlaylist? {
        guard let lines = HLSLines(text) else { return nil }
        let isMaster = lines.contains { line in
            guard case .tag(let name, _) = line.content else { return false }
            return name == "#EXT-X-STREAM-INF" || name == "#EXT-X-MEDIA"
        }
        return isMaster ? .master(parseMaster(lines)) : .media(parseMedia(lines))
    }

    static func parseMaster(_ lines: HLSLines) -> HLSMasterPlaylist {
        var playlist = HLSMasterPlaylist()
        var pending: [String: String]?
        for line in lines {
            switch line.content {
            case .tag("#EXT-X-STREAM-INF", let value):
                pending = HLSLines.attributes(value)
            case .tag("#EXT-X-MEDIA", let value):
                let values = HLSLines.attributes(value)
                playlist.renditions.append(
                    HLSRendition(
                        type: values["TYPE"] ?? "", groupID: values["GROUP-ID"] ?? "", name: values["NAME"] ?? "",
                        language: values["LANGUAGE"], uri: values["URI"], isDefault: values["DEFAULT"] == "YES",
                        isAutoselect: values["AUTOSELECT"] == "YES", isForced: values["FORCED"] == "YES"))
            case .uri(let uri):
                guard let values = pending else { continue }
                var variant = HLSVariant(uri: String(uri), bandwidth: values["BANDWIDTH"].flatMap { Int($0) } ?? 0)
                variant.averageBandwidth = values["AVERAGE-BANDWIDTH"].flatMap { Int($0) }
                variant.codecs =
                    values["CODECS"].map { $0.split(separator: ",").map { String(HLSLines.trimmingBlanks($0)) } } ?? []
                if let resolution = values["RESOLUTION"] {
                    let parts = resolution.lowercased().split(separator: "x").compactMap { Int($0) }
                    if parts.count == 2 {
                        variant.width = parts[0]
                        variant.height = parts[1]
                    }
                }
                variant.frameRate = values["FRAME-RATE"].flatMap { Double($0) }
                variant.audioGroup = values["AUDIO"]
                variant.subtitlesGroup = values["SUBTITLES"]
                playlist.variants.append(variant)
                pending = nil
            default:
                continue
            }
        }
        return playlist
    }

    static func parseMedia(_ lines: HLSLines) -> HLSMediaPlaylist {
        var playlist = HLSMediaPlaylist()
        var duration: Double?
        for line in lines {
            switch line.content {
            case .tag("#EXTINF", let value):
                switch HLSLines.segmentDuration(value) {
                case .seconds(let seconds): duration = seconds
                case .outOfRange:
                    duration = nil
                    playlist.outOfRangeDurations += 1
                case .unreadable: duration = nil
                }
            case .tag("#EXT-X-TARGETDURATION", let value):
                playlist.targetDuration = Double(HLSLines.trimmingBlanks(value))
            case .tag("#EXT-X-MAP", let value):
                playlist.initializationSegment = HLSLines.attributes(value)["URI"]
            case .tag("#EXT-X-KEY", let value):
                let values = HLSLines.attributes(value)
                if let uri = values["URI"], values["METHOD"] != "NONE" { playlist.keys.append(uri) }
            case .tag("#EXT-X-ENDLIST", _):
                playlist.hasEndList = true
            case .tag("#EXT-X-PLAYLIST-TYPE", let value):
                playlist.playlistType = String(HLSLines.trimmingBlanks(value))
            case .uri(let uri):
                playlist.segments.append(HLSSegment(uri: String(uri), duration: duration ?? 0))
                duration = nil
            default:
                continue
            }
        }
        return playlist
    }
}

/// A master playlist: the bitrate ladder and the alternative renditions.
public struct HLSMasterPlaylist: Sendable, Hashable {
    public var variants: [HLSVariant] = []
    public var renditions: [HLSRendition] = []
}

/// One `#EXT-X-STREAM-INF` entry.
public struct HLSVariant: Sendable, Hashable {
    public var uri: String
    public var bandwidth: Int
    public var averageBandwidth: Int?
    /// RFC 6381 codec strings from `CODECS`.
    public var codecs: [String] = []
    public var width: Int?
    public var height: Int?
    public var frameRate: Double?
    public var audioGroup: String?
    public var subtitlesGroup: String?

    /// Creates a variant.
    public init(uri: String, bandwidth: Int) {
        self.uri = uri
        self.bandwidth = bandwidth
    }
}

/// One `#EXT-X-MEDIA` entry (alternative audio, subtitles, closed captions).
public struct HLSRendition: Sendable, Hashable {
    /// `AUDIO`, `VIDEO`, `SUBTITLES` or `CLOSED-CAPTIONS`.
    public var type: String
    public var groupID: String
    public var name: String
    public var language: String?
    public var uri: String?
    public var isDefault: Bool
    public var isAutoselect: Bool
    public var isForced: Bool
}

/// A media playlist: the segments of one rendition.
public struct HLSMediaPlaylist: Sendable, Hashable {
    public var targetDuration: Double?
    public var segments: [HLSSegment] = []
    /// `#EXT-X-MAP` URI: present for fMP4 segments.
    public var initializationSegment: String?
    /// `#EXT-X-KEY` URIs.
    public var keys: [String] = []
    public var hasEndList = false
    public var playlistType: String?
    /// How many `#EXTINF` values were outside `0...`\(``HLSLines/maximumSegmentSeconds``) (their
    /// segments count as 0 s).
    public var outOfRangeDurations = 0

    /// VOD and EVENT playlists that have ended are BUFFERED; anything else is LIVE.
    public var isLive: Bool { !hasEndList && playlistType != "VOD" }

    /// Total duration of the listed segments.
    public var duration: Double { segments.reduce(0) { $0 + $1.duration } }

    /// How the segments are packaged, from the map and the segment names.
    public var segmentPackaging: HLSPackaging {
        if initializationSegment != nil { return .fmp4 }
        guard let uri = segments.first?.uri else { return .unknown }
        let path = uri.split(separator: "?").first.map(String.init) ?? uri
        let ext = path.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return switch ext {
        case "ts": .ts
        case "m4s", "mp4", "cmfv", "cmfa", "m4a", "m4v": .fmp4
        case "aac": .aac
        case "ac3": .ac3
        case "ec3": .eac3
        case "mp3": .mp3
        case "vtt", "webvtt": .webvtt
        default: .unknown
        }
    }
}

/// One media segment.
public struct HLSSegment: Sendable, Hashable {
    public var uri: String
    public var duration: Double
}

/// Segment packaging, which decides the LOAD's `hlsSegmentFormat` / `hlsVideoSegmentFormat`.
public enum HLSPackaging: String, Sendable, Hashable, Codable {
    case ts, fmp4, aac, ac3, eac3, mp3, webvtt, unknown
}
