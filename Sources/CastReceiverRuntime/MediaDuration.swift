import CastModel
import HTTPCheck

/// Reads how long media lasts, the way a player learns it before playing: from the first
/// media playlist of an HLS stream, the MPD of a DASH stream, or the `moov` at the start of an
/// MP4. The HTTP check says whether the media can be fetched; this says when it ends.
struct DurationReader: Sendable {
    let transport: HTTPTransport
    let origin: String
    let options: ReceiverMediaFetcher.Options

    /// The most of a playlist or manifest that is read.
    static let manifestBytes = 2 << 20

    /// The measured duration (nil when unknown, live or unreadable) and notes about it.
    func duration(of text: String, family: CastMediaTypes.Family) async -> (seconds: Double?, notes: [Diagnostic]) {
        guard let url = WebURL(text) else { return (nil, []) }
        switch family {
        case .hls:
            guard let master = await body(of: url, limit: Self.manifestBytes) else { return (nil, []) }
            let text = String(decoding: master, as: UTF8.self)
            guard let playlist = HLSReferences.parse(text) else { return (nil, []) }
            guard playlist.isMaster else { return (MediaDuration.hls(text), []) }
            guard let variant = playlist.references.first(where: { $0.role == .variant }), let variantURL = url.resolving(variant.uri),
                let media = await body(of: variantURL, limit: Self.manifestBytes)
            else { return (nil, []) }
            return (MediaDuration.hls(String(decoding: media, as: UTF8.self)), [])
        case .dash:
            guard let manifest = await body(of: url, limit: Self.manifestBytes) else { return (nil, []) }
            return (MediaDuration.dash(String(decoding: manifest, as: UTF8.self)), [])
        case .smooth:
            return (nil, [])
        default:
            guard let head = await body(of: url, limit: options.durationProbeBytes, range: "bytes=0-\(options.durationProbeBytes - 1)")
            else { return (nil, []) }
            if let seconds = MediaDuration.mp4(head) { return (seconds, []) }
            guard MediaDuration.looksLikeMP4(head) else { return (nil, []) }
            let note = Diagnostic(
                .note, "receiver.moov-not-at-start",
                "the MP4's moov box is not in its first \(options.durationProbeBytes / 1024) KiB, so the player needs another request before it can start",
                fix: "remux with " + CastMediaTypes.fastStartCommand, url: text)
            return (nil, [note])
        }
    }

    /// The body of a successful GET carrying the receiver's Origin (redirects followed), or nil.
    func body(of start: WebURL, limit: Int, range: String? = nil) async -> [UInt8]? {
        var url = start
        for _ in 0..<5 {
            var headers = HTTPHeaders()
            headers.add("User-Agent", CheckOptions.castUserAgent)
            headers.add("Origin", origin)
            if let range { headers.add("Range", range) }
            let request = HTTPRequest(.get, url.description, headers: headers, bodyLimit: limit, timeout: options.requestTimeout)
            guard case .success(let response) = await transport.send(request) else { return nil }
            if response.isRedirect, let location = response.headers["location"], let next = url.resolving(location) {
                url = next
                continue
            }
            return (200..<300).contains(response.status) ? response.body : nil
        }
        return nil
    }
}

/// Durations from the bytes a player reads first.
enum MediaDuration {
    /// The `EXTINF` sum of a finished media playlist (one with `#EXT-X-ENDLIST`); a live
    /// playlist has no length, and neither has one with a duration outside
    /// `0...`\(``HLSReferences/maximumSegmentSeconds``) (the HTTP check refuses those).
    static func hls(_ text: String) -> Double? {
        var total = 0.0
        var ended = false
        for rawLine in text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }) {
            let line = rawLine.drop { $0 == " " || $0 == "\t" }
            if line.hasPrefix("#EXTINF:") {
                let value = line.dropFirst("#EXTINF:".count).prefix { $0 != "," }.filter { $0 != " " && $0 != "\t" }
                guard let seconds = Double(value) else { continue }
                guard (0...HLSReferences.maximumSegmentSeconds).contains(seconds) else { return nil }
                total += seconds
            } else if line.hasPrefix("#EXT-X-ENDLIST") {
                ended = true
            }
        }
        return ended && total > 0 ? total : nil
    }

    /// The `mediaPresentationDuration` of a static MPD.
    static func dash(_ text: String) -> Double? {
        guard let open = text.firstRange(of: "<MPD") else { return nil }
        let rest = text[open.upperBound...]
        guard let close = rest.firstIndex(of: ">") else { return nil }
        let tag = rest[..<close]
        if tag.contains("type=\"dynamic\"") || tag.contains("type='dynamic'") { return nil }
        for quote in ["\"", "'"] {
            guard let start = tag.firstRange(of: "mediaPresentationDuration=" + quote) else { continue }
            let value = tag[start.upperBound...].prefix { String($0) != quote }
            return seconds(iso8601: String(value))
        }
        return nil
    }

    /// Seconds in an ISO 8601 duration such as `PT1H2M3.5S` or `P1DT2H`; nil past 64
    /// characters or ``DASHReferences/maximumPresentationSeconds`` (the HTTP check refuses those).
    static func seconds(iso8601 text: String) -> Double? {
        guard text.hasPrefix("P"), text.utf8.count <= 64 else { return nil }
        var total = 0.0
        var number = ""
        var inTime = false
        for character in text.dropFirst() {
            switch character {
            case "T": inTime = true
            case "0"..."9", ".": number.append(character)
            default:
                guard let value = Double(number) else { return nil }
                number = ""
                switch (character, inTime) {
                case ("Y", false): total += value * 365 * 86_400
                case ("M", false): total += value * 30 * 86_400
                case ("W", false): total += value * 7 * 86_400
                case ("D", false): total += value * 86_400
                case ("H", true): total += value * 3600
                case ("M", true): total += value * 60
                case ("S", true): total += value
                default: return nil
                }
            }
        }
        return number.isEmpty && total > 0 && total <= DASHReferences.maximumPresentationSeconds ? total : nil
    }

    /// Whether the bytes start like an ISO BMFF file.
    static func looksLikeMP4(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 8 && [Array("ftyp".utf8), Array("moov".utf8), Array("styp".utf8)].contains(Array(bytes[4..<8]))
    }

    /// The movie duration from `moov` → `mvhd`, when `moov` lies wholly in `bytes`.
    static func mp4(_ bytes: [UInt8]) -> Double? {
        guard let moov = box("moov", in: bytes[...]), let mvhd = box("mvhd", in: moov), mvhd.count >= 20 else { return nil }
        let start = mvhd.startIndex
        let timescale: UInt64
        let duration: UInt64
        if mvhd[start] == 1 {
            guard mvhd.count >= 32 else { return nil }
            timescale = integer(mvhd, at: start + 20, width: 4)
            duration = integer(mvhd, at: start + 24, width: 8)
        } else {
            timescale = integer(mvhd, at: start + 12, width: 4)
            duration = integer(mvhd, at: start + 16, width: 4)
        }
        // All ones means "unknown" in mvhd.
        guard timescale > 0, duration > 0, duration != UInt64(UInt32.max), duration != UInt64.max else { return nil }
        return Double(duration) / Double(timescale)
    }

    /// The payload of the first box of `type` at this level, when it lies wholly in `bytes`.
    static func box(_ type: String, in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let wanted = Array(type.utf8)
        var offset = bytes.startIndex
        while offset + 8 <= bytes.endIndex {
            var size = Int(clamping: integer(bytes, at: offset, width: 4))
            var header = 8
            if size == 1 {
                guard offset + 16 <= bytes.endIndex else { return nil }
                size = Int(clamping: integer(bytes, at: offset + 8, width: 8))
                header = 16
            } else if size == 0 {
                size = bytes.endIndex - offset
            }
            guard size >= header else { return nil }
            if Array(bytes[(offset + 4)..<(offset + 8)]) == wanted {
                guard size <= bytes.endIndex - offset else { return nil }
                return bytes[(offset + header)..<(offset + size)]
            }
            guard size <= bytes.endIndex - offset else { return nil }
            offset += size
        }
        return nil
    }

    static func integer(_ bytes: ArraySlice<UInt8>, at offset: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + width) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
