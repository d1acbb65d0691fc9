import JSONSupport

/// A parsed MIME type such as `video/mp4; codecs="avc1.640028, mp4a.40.2"`.
///
/// The receiver chooses its player from `contentType`, so CastPrep checks its syntax and
/// its meaning, not just its presence.
public struct MediaType: Sendable, Hashable, CustomStringConvertible {
    /// Lower-cased type, e.g. `video`.
    public var type: String { didSet { essence = Self.essence(type, subtype) } }
    /// Lower-cased subtype, e.g. `mp4`.
    public var subtype: String { didSet { essence = Self.essence(type, subtype) } }
    /// Parameters in order, names lower-cased, values unquoted.
    public var parameters: [(name: String, value: String)]

    /// `type/subtype` without parameters. Kept, not joined on each use: the validator asks for
    /// it of every item's content type and text tracks.
    public private(set) var essence: String

    /// `type/subtype`, joined in one buffer of the right size (string interpolation grows its
    /// own); up to 15 bytes a string is stored inline, and reserving would move it to the heap.
    private static func essence(_ type: String, _ subtype: String) -> String {
        var text = type
        let length = type.utf8.count + 1 + subtype.utf8.count
        if length > 15 { text.reserveCapacity(length) }
        text += "/"
        text += subtype
        return text
    }

    /// The RFC 6381 codecs listed in the `codecs` parameter.
    public var codecs: [String] {
        guard let value = parameters.first(where: { $0.name == "codecs" })?.value else { return [] }
        return value.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
    }

    public var description: String {
        var text = essence
        for (name, value) in parameters {
            let needsQuotes = value.contains { " ,;\"=".contains($0) } || value.isEmpty
            let escaped = value.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"")
            text += "; \(name)=" + (needsQuotes ? "\"\(escaped)\"" : value)
        }
        return text
    }

    public static func == (lhs: MediaType, rhs: MediaType) -> Bool {
        lhs.essence == rhs.essence && lhs.parameters.map(\.name) == rhs.parameters.map(\.name)
            && lhs.parameters.map(\.value) == rhs.parameters.map(\.value)
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    /// Why a string is not a valid MIME type.
    public enum ParseError: CodedError, Hashable {
        case empty
        case missingSlash
        case invalidToken(String)
        case unquotedListParameter(String)
        case malformedParameter(String)
        case unterminatedQuote

        /// Always `media.content-type-malformed`.
        public var code: DiagnosticCode { "media.content-type-malformed" }

        public var message: String {
            switch self {
            case .empty: "the MIME type is empty"
            case .missingSlash: "the MIME type has no '/' between type and subtype"
            case .invalidToken(let text): "\"\(text)\" is not a MIME token"
            case .unquotedListParameter(let name): "the parameter \(name) holds a list but is not quoted"
            case .malformedParameter(let text): "the parameter \"\(text)\" is not name=value"
            case .unterminatedQuote: "a quoted parameter value has no closing quote"
            }
        }

        public var fix: String? {
            switch self {
            case .unquotedListParameter(let name): "quote the list: \(name)=\"a, b\""
            case .missingSlash: "write type/subtype, e.g. \"video/mp4\""
            default: "write type/subtype with optional parameters, e.g. video/mp4; codecs=\"avc1.640028, mp4a.40.2\""
            }
        }
    }

    /// Parses `text` per RFC 9110 media-type syntax (token/token *(; token=token|quoted-string)).
    public static func parse(_ text: String) -> Result<MediaType, ParseError> {
        if let simple = parseBare(text) { return .success(simple) }
        let trimmed = text.trimmingSpaces()
        guard !trimmed.isEmpty else { return .failure(.empty) }
        let scalars = Array(trimmed.unicodeScalars)
        var index = 0
        func readToken() -> String {
            var token = ""
            while index < scalars.count, isTokenCharacter(scalars[index]) {
                token.unicodeScalars.append(scalars[index])
                index += 1
            }
            return token
        }
        func skipSpaces() {
            while index < scalars.count, scalars[index] == " " || scalars[index] == "\t" { index += 1 }
        }
        let type = readToken()
        guard !type.isEmpty else { return .failure(.invalidToken(trimmed)) }
        guard index < scalars.count, scalars[index] == "/" else { return .failure(.missingSlash) }
        index += 1
        let subtype = readToken()
        guard !subtype.isEmpty else { return .failure(.invalidToken(trimmed)) }
        var parameters: [(String, String)] = []
        skipSpaces()
        while index < scalars.count {
            guard scalars[index] == ";" else {
                return .failure(.invalidToken(String(String.UnicodeScalarView(scalars[index...]))))
            }
            index += 1
            skipSpaces()
            if index == scalars.count { break }  // a trailing ";" is tolerated
            let name = readToken().lowercased()
            guard !name.isEmpty, index < scalars.count, scalars[index] == "=" else {
                return .failure(.malformedParameter(String(String.UnicodeScalarView(scalars[index...]))))
            }
            index += 1
            var value = ""
            if index < scalars.count, scalars[index] == "\"" {
                index += 1
                var closed = false
                while index < scalars.count {
                    let scalar = scalars[index]
                    index += 1
                    if scalar == "\"" {
                        closed = true
                        break
                    }
                    if scalar == "\\", index < scalars.count {
                        value.unicodeScalars.append(scalars[index])
                        index += 1
                    } else {
                        value.unicodeScalars.append(scalar)
                    }
                }
                guard closed else { return .failure(.unterminatedQuote) }
            } else {
                value = readToken()
                if index < scalars.count, scalars[index] == "," {
                    return .failure(.unquotedListParameter(name))
                }
                guard !value.isEmpty else { return .failure(.malformedParameter(name)) }
            }
            parameters.append((name, value))
            skipSpaces()
        }
        return .success(MediaType(type: type.lowercased(), subtype: subtype.lowercased(), parameters: parameters))
    }

    /// Creates a type from its parts.
    public init(type: String, subtype: String, parameters: [(name: String, value: String)] = []) {
        self.type = type
        self.subtype = subtype
        self.parameters = parameters
        essence = Self.essence(type, subtype)
    }

    /// A type without parameters whose essence is already joined (`parseBare`).
    private init(type: String, subtype: String, essence: String) {
        self.type = type
        self.subtype = subtype
        parameters = []
        self.essence = essence
    }

    /// What ``parse(_:)`` gives when it succeeds, nil when it fails. For callers that need the
    /// type and only rarely the reason (the validator, for every item): a `Result` of a type
    /// was destroyed through the runtime's generic value witnesses on every call.
    static func parsedIfValid(_ text: String) -> MediaType? {
        if let bare = parseBare(text) { return bare }
        guard case .success(let parsed) = parse(text) else { return nil }
        return parsed
    }

    /// The common `type/subtype` with nothing around it and no parameters, read from its
    /// bytes; nil for anything else, which the general reading handles (the result is the same).
    private static func parseBare(_ text: String) -> MediaType? {
        // Read in place: the string is not copied to reach its bytes.
        text.withUTF8Bytes { bytes -> MediaType? in
            // The types Cast knows, written as they are listed, are nearly every content type
            // of a catalog: looked up already parsed (their strings shared, not made again).
            if let known = knownBareTypes.value(forKeyBytes: bytes) { return known }
            return readBare(bytes, of: text)
        }
    }

    /// ``parseBare(_:)`` on the UTF-8 bytes of `text`, without the lookup.
    private static func readBare(_ bytes: UnsafeBufferPointer<UInt8>, of text: String) -> MediaType? {
        var slash: Int?
        var hasCapitals = false
        for (index, byte) in bytes.enumerated() {
            if byte == UInt8(ascii: "/") {
                guard slash == nil else { return nil }
                slash = index
            } else if !isTokenByte(byte) {
                return nil
            }
            hasCapitals = hasCapitals || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
        }
        guard let slash, slash > 0, slash < bytes.count - 1 else { return nil }
        // Token bytes are ASCII: lower-cased as they are copied (no `lowercased()` pass),
        // the essence being the whole text, which is shared as it is when already small.
        return MediaType(
            type: asciiLowercased(UnsafeBufferPointer(rebasing: bytes[..<slash])),
            subtype: asciiLowercased(UnsafeBufferPointer(rebasing: bytes[(slash + 1)...])),
            essence: hasCapitals ? asciiLowercased(bytes) : text)
    }

    /// Every essence ``CastMediaTypes`` lists, parsed once by the reading above (so a type
    /// looked up here is exactly the one it would have parsed).
    private static let knownBareTypes = ShortKeyTable(
        CastMediaTypes.knownEssences.compactMap { essence in
            essence.withUTF8Bytes { readBare($0, of: essence) }.map { (essence, $0) }
        })

    /// The ASCII text of `bytes` with its capital letters made small.
    private static func asciiLowercased(_ bytes: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { copy in
            for (index, byte) in bytes.enumerated() {
                copy[index] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            }
            return bytes.count
        }
    }

    /// ``isTokenCharacter(_:)`` for one byte.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        guard byte > 0x20, byte < 0x7F else { return false }
        switch byte {
        case UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "@"),
            UInt8(ascii: ","),
            UInt8(ascii: ";"), UInt8(ascii: ":"), UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "/"),
            UInt8(ascii: "["),
            UInt8(ascii: "]"), UInt8(ascii: "?"), UInt8(ascii: "="), UInt8(ascii: "{"), UInt8(ascii: "}"):
            return false
        default:
            return true
        }
    }

    private static func isTokenCharacter(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII, scalar.value > 0x20, scalar.value < 0x7F else { return false }
        return !"()<>@,;:\\\"/[]?={}".unicodeScalars.contains(scalar)
    }
}

// MARK: - What Cast plays

/// The container and streaming types the Cast media page lists, with the MIME types
/// senders use for them.
public enum CastMediaTypes {
    /// HLS playlists; `application/x-mpegurl` is what the CastVideos samples send.
    public static let hls: Set<String> = [
        "application/x-mpegurl", "application/vnd.apple.mpegurl", "audio/mpegurl", "audio/x-mpegurl",
    ]
    /// DASH manifests.
    public static let dash: Set<String> = ["application/dash+xml"]
    /// Smooth Streaming manifests.
    public static let smooth: Set<String> = ["application/vnd.ms-sstr+xml"]
    /// Progressive containers Cast decodes: MP4, WebM, MPEG-TS, MP3, OGG, WAV, FLAC, AAC.
    public static let progressive: Set<String> = [
        "video/mp4", "audio/mp4", "video/webm", "audio/webm", "video/mp2t", "audio/mpeg", "audio/mp3", "audio/ogg",
        "video/ogg", "audio/wav", "audio/wave", "audio/x-wav", "audio/flac", "audio/x-flac", "audio/aac", "audio/opus",
    ]
    /// Image types the receiver shows.
    public static let images: Set<String> = [
        "image/jpeg", "image/png", "image/gif", "image/webp", "image/bmp", "image/apng",
    ]
    /// Text track types the receiver renders.
    public static let textTracks: Set<String> = ["text/vtt", "application/ttml+xml", "application/mp4", "text/cea608"]

    /// Containers that exist but no Cast device plays, with the fix.
    public static let unsupported: [String: String] = [
        "video/x-matroska": "Matroska (MKV) is not a Cast container; remux to MP4: "
            + conversionCommands["video/x-matroska", default: ""] + probeAfterRemux,
        "video/quicktime": "QuickTime (MOV) is not a Cast container; remux to MP4: "
            + conversionCommands["video/quicktime", default: ""] + probeAfterRemux,
        "video/x-msvideo": "AVI is not a Cast container; transcode to MP4 (H.264 + AAC): "
            + conversionCommands["video/x-msvideo", default: ""],
        "video/x-flv": "FLV is not a Cast container; transcode to MP4 (H.264 + AAC): "
            + conversionCommands["video/x-flv", default: ""],
        "video/x-ms-wmv": "WMV is not playable on Cast; transcode to MP4 (H.264 + AAC): "
            + conversionCommands["video/x-ms-wmv", default: ""],
        "audio/x-ms-wma": "WMA is not playable on Cast; transcode to AAC: "
            + conversionCommands["audio/x-ms-wma", default: ""],
        "video/mpeg": "MPEG-PS is not a Cast container; transcode to MP4 (H.264 + AAC): "
            + conversionCommands["video/mpeg", default: ""],
        "application/x-subrip": "SRT is not a Cast text format; convert to WebVTT: castprep captions convert IN.srt",
        "text/srt": "SRT is not a Cast text format; convert to WebVTT: castprep captions convert IN.srt",
    ]

    /// The ffmpeg command behind each fix in ``unsupported``, with `IN.<ext>` and `OUT.mp4` (or
    /// `OUT.m4a`) for the files. Matroska and MOV keep their video (a remux; `castprep probe
    /// OUT.mp4` then says whether a device needs it re-encoded) and re-encode audio to AAC,
    /// because MP4 does not take every codec those containers carry (PCM, Vorbis, DTS); the
    /// others are re-encoded to H.264/AAC, because their usual codecs (Sorenson, VP6, MPEG-4
    /// Part 2, WMV, MPEG-2) do not play on Cast. Tests run every one on a sample.
    public static let conversionCommands: [String: String] = [
        "video/x-matroska": "ffmpeg -i IN.mkv " + remuxArguments,
        "video/quicktime": "ffmpeg -i IN.mov " + remuxArguments,
        "video/x-msvideo": "ffmpeg -i IN.avi " + transcodeArguments,
        "video/x-flv": "ffmpeg -i IN.flv " + transcodeArguments,
        "video/x-ms-wmv": "ffmpeg -i IN.wmv " + transcodeArguments,
        "video/mpeg": "ffmpeg -i IN.mpg " + transcodeArguments,
        "audio/x-ms-wma": "ffmpeg -i IN.wma -map 0:a:0 -c:a aac -b:a 192k -movflags +faststart OUT.m4a",
    ]

    private static let probeAfterRemux =
        " (then castprep probe OUT.mp4 says whether a device needs the video re-encoded)"

    /// Moves an MP4 file's index (moov) to the front without touching its streams.
    public static let fastStartCommand = "ffmpeg -i IN.mp4 -map 0 -c copy -movflags +faststart OUT.mp4"

    private static let remuxArguments =
        "-map '0:v?' -map '0:a?' -c:v copy -c:a aac -ac 2 -b:a 192k -movflags +faststart OUT.mp4"
    private static let transcodeArguments =
        "-map '0:v?' -map '0:a?' -c:v libx264 -profile:v high -pix_fmt yuv420p -crf 20 -preset medium -c:a aac -ac 2 -b:a 192k -movflags +faststart OUT.mp4"

    /// Every type a LOAD's `contentType` may sensibly carry.
    public static var playable: Set<String> { hls.union(dash).union(smooth).union(progressive).union(images) }

    /// The content type a URL's file extension implies, if any (the extension in any case).
    public static func contentType(forExtension pathExtension: String) -> String? {
        // Asked of every URL of a catalog, nearly always with an extension already in lower
        // case (URLSyntax.pathExtension gives it so): looked up as it is first, lower-cased
        // only when that misses.
        extensionTypes[pathExtension] ?? extensionTypes[pathExtension.lowercased()]
    }

    /// File extensions (lower case) and the content types they imply.
    static let extensionTypes = ShortKeyTable<String>([
        ("m3u8", "application/x-mpegurl"), ("m3u", "application/x-mpegurl"), ("mpd", "application/dash+xml"),
        ("ism", "application/vnd.ms-sstr+xml"), ("isml", "application/vnd.ms-sstr+xml"), ("mp4", "video/mp4"),
        ("m4v", "video/mp4"), ("m4a", "audio/mp4"), ("webm", "video/webm"), ("ts", "video/mp2t"),
        ("m2ts", "video/mp2t"), ("mp3", "audio/mpeg"), ("ogg", "audio/ogg"), ("oga", "audio/ogg"),
        ("ogv", "video/ogg"), ("opus", "audio/ogg"), ("wav", "audio/wav"), ("flac", "audio/flac"),
        ("aac", "audio/aac"), ("jpg", "image/jpeg"), ("jpeg", "image/jpeg"), ("png", "image/png"),
        ("gif", "image/gif"), ("webp", "image/webp"), ("bmp", "image/bmp"), ("mkv", "video/x-matroska"),
        ("mov", "video/quicktime"), ("avi", "video/x-msvideo"), ("flv", "video/x-flv"), ("wmv", "video/x-ms-wmv"),
        ("vtt", "text/vtt"), ("ttml", "application/ttml+xml"), ("dfxp", "application/ttml+xml"),
        ("xml", "application/ttml+xml"), ("srt", "application/x-subrip"),
    ])

    /// The streaming family of a content type's essence.
    public enum Family: String, Sendable, Hashable {
        case hls, dash, smooth, progressive, image, text, unsupported, unknown
    }

    /// Classifies a content type essence such as `video/mp4`.
    public static func family(of essence: String) -> Family { families[essence] ?? .unknown }

    /// Whether `essence` is one of ``textTracks`` (asked of every text track of every LOAD).
    public static func isTextTrackType(_ essence: String) -> Bool { textTrackTypes.contains(essence) }

    /// Every essence the lists above name, in UTF-8 order.
    static var knownEssences: [String] {
        hls.union(dash).union(smooth).union(progressive).union(images).union(textTracks).union(unsupported.keys)
            .sorted()
    }

    /// Every known essence and its family: one lookup where asking each list in turn hashed
    /// the essence up to seven times. An essence in two lists gets the first list's family,
    /// in the order below.
    private static let families: ShortKeyTable<Family> = {
        let lists: [(Family, [String])] = [
            (.hls, hls.sorted()), (.dash, dash.sorted()), (.smooth, smooth.sorted()),
            (.progressive, progressive.sorted()), (.image, images.sorted()), (.text, textTracks.sorted()),
            (.unsupported, unsupported.keys.sorted()),
        ]
        return ShortKeyTable(lists.lazy.flatMap { family, essences in essences.lazy.map { ($0, family) } })
    }()

    private static let textTrackTypes = ShortKeyTable(keys: textTracks)
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs.
    func trimmingSpaces() -> String {
        var view = Substring(self)
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return String(view)
    }
}
