/// An HLS playlist (RFC 8216): a master playlist with variants and renditions, or a media
/// playlist with segments.
///
/// Parsing is line-based and bounded: unknown tags are ignored as the RFC requires, attribute
/// lists are read with quoted strings honoured, at most ``maximumLines`` lines are read, and
/// lines longer than ``maximumLineBytes`` are skipped (the HTTP check reports them as
/// `http.manifest-line-too-long`). `#EXTINF` values outside `0...`\(``maximumSegmentSeconds``)
/// count as unknown (0), so ``HLSMediaPlaylist/duration`` stays finite.
public enum HLSPlaylist: Sendable, Hashable {
    case master(HLSMasterPlaylist)
    case media(HLSMediaPlaylist)

    /// Lines beyond this are not read: no real playlist comes close, and a hostile one must not
    /// cost unbounded time.
    public static let maximumLines = 1_000_000
    /// Lines longer than this (in UTF-8 bytes) are skipped, as ``HLSReferences`` does.
    public static let maximumLineBytes = 64 << 10
    /// The longest `#EXTINF` read as a duration, in seconds (a day, as ``HLSReferences``).
    public static let maximumSegmentSeconds = 86_400.0
    /// Attribute-list characters read per tag.
    static let maximumAttributeCharacters = 16_384

    /// Parses playlist text. Returns nil when the text does not start with `#EXTM3U`.
    public static func parse(_ text: String) -> HLSPlaylist? {
        var lines = text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" })
            .prefix(maximumLines).filter { $0.utf8.count <= maximumLineBytes }.map { $0.trimmingBlanks() }
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = String(first.dropFirst()) }
        guard lines.first?.hasPrefix("#EXTM3U") == true else { return nil }
        if lines.contains(where: { $0.hasPrefix("#EXT-X-STREAM-INF") || $0.hasPrefix("#EXT-X-MEDIA:") }) {
            return .master(parseMaster(lines))
        }
        return .media(parseMedia(lines))
    }

    static func parseMaster(_ lines: [String]) -> HLSMasterPlaylist {
        var playlist = HLSMasterPlaylist()
        var pending: [String: String]?
        for line in lines {
            if line.hasPrefix("#EXT-X-STREAM-INF:") {
                pending = attributes(String(line.dropFirst("#EXT-X-STREAM-INF:".count)))
            } else if line.hasPrefix("#EXT-X-MEDIA:") {
                let values = attributes(String(line.dropFirst("#EXT-X-MEDIA:".count)))
                playlist.renditions.append(
                    HLSRendition(
                        type: values["TYPE"] ?? "", groupID: values["GROUP-ID"] ?? "", name: values["NAME"] ?? "",
                        language: values["LANGUAGE"], uri: values["URI"], isDefault: values["DEFAULT"] == "YES",
                        isAutoselect: values["AUTOSELECT"] == "YES", isForced: values["FORCED"] == "YES"))
            } else if line.hasPrefix("#EXT-X-I-FRAME-STREAM-INF") {
                continue
            } else if !line.hasPrefix("#"), let values = pending {
                var variant = HLSVariant(uri: line, bandwidth: values["BANDWIDTH"].flatMap { Int($0) } ?? 0)
                variant.averageBandwidth = values["AVERAGE-BANDWIDTH"].flatMap { Int($0) }
                variant.codecs = values["CODECS"].map { $0.split(separator: ",").map { $0.trimmingBlanks() } } ?? []
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
            }
        }
        return playlist
    }

    static func parseMedia(_ lines: [String]) -> HLSMediaPlaylist {
        var playlist = HLSMediaPlaylist()
        var duration: Double?
        for line in lines {
            if line.hasPrefix("#EXTINF:") {
                duration = Double(line.dropFirst(8).prefix { $0 != "," }.trimmingBlanks()).flatMap {
                    (0...maximumSegmentSeconds).contains($0) ? $0 : nil
                }
            } else if line.hasPrefix("#EXT-X-TARGETDURATION:") {
                playlist.targetDuration = Double(line.dropFirst("#EXT-X-TARGETDURATION:".count).trimmingBlanks())
            } else if line.hasPrefix("#EXT-X-MAP:") {
                playlist.initializationSegment = attributes(String(line.dropFirst("#EXT-X-MAP:".count)))["URI"]
            } else if line.hasPrefix("#EXT-X-KEY:") {
                let values = attributes(String(line.dropFirst("#EXT-X-KEY:".count)))
                if let uri = values["URI"], values["METHOD"] != "NONE" { playlist.keys.append(uri) }
            } else if line == "#EXT-X-ENDLIST" {
                playlist.hasEndList = true
            } else if line.hasPrefix("#EXT-X-PLAYLIST-TYPE:") {
                playlist.playlistType = line.dropFirst("#EXT-X-PLAYLIST-TYPE:".count).trimmingBlanks()
            } else if !line.hasPrefix("#") {
                playlist.segments.append(HLSSegment(uri: line, duration: duration ?? 0))
                duration = nil
            }
        }
        return playlist
    }

    /// Parses an attribute list: `KEY=value,KEY="quoted, value"`.
    static func attributes(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        var key = ""
        var value = ""
        var readingKey = true
        var inQuotes = false
        func flush() {
            if !key.isEmpty { result[key.trimmingBlanks().uppercased()] = value }
            key = ""
            value = ""
            readingKey = true
        }
        for character in text.prefix(maximumAttributeCharacters) {
            if readingKey {
                if character == "=" { readingKey = false } else if character == "," { flush() } else { key.append(character) }
            } else if character == "\"" {
                inQuotes.toggle()
            } else if character == ",", !inQuotes {
                flush()
            } else {
                value.append(character)
            }
        }
        flush()
        return result
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

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    func trimmingBlanks() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
