public import CastModel
internal import StreamingFormats

/// The URLs an HLS playlist makes a player fetch, read line by line (RFC 8216 §4).
///
/// This is a reference walker, not a full playlist model: it keeps what the receiver will
/// request — variant and rendition playlists from a master playlist; segments with their byte
/// ranges, `EXT-X-MAP` initialisation sections and `EXT-X-KEY` keys from a media playlist —
/// with the line each came from, so findings can point into the playlist. Lines, tags,
/// attribute lists, durations and byte ranges are read by StreamingFormats' `HLSLines`, which
/// MediaProbe's playlist model and the receiver's duration reader share.
///
/// Bounded for hostile input: at most ``maximumLines`` lines and ``maximumReferences``
/// references are read; the rest is counted as cut off. Lines longer than
/// ``maximumLineBytes``, byte ranges that end past the largest file offset and segment
/// durations outside `0...`\(``maximumSegmentSeconds``) are not used: each becomes a
/// ``Problem`` instead of a trap or a nonsense request.
public struct HLSReferences: Sendable, Hashable {
    /// One URL the playlist refers to.
    public struct Reference: Sendable, Hashable {
        /// What the player uses it for.
        public enum Role: String, Sendable, Hashable, Codable {
            /// An `#EXT-X-STREAM-INF` variant playlist.
            case variant
            /// An `#EXT-X-MEDIA` audio or video rendition playlist.
            case rendition
            /// An `#EXT-X-MEDIA` subtitles rendition playlist (its segments are WebVTT).
            case subtitles
            /// A media segment.
            case segment
            /// An `#EXT-X-MAP` initialisation section.
            case initSegment
            /// An `#EXT-X-KEY` decryption key.
            case key
        }

        /// The URI as written.
        public var uri: String
        /// What the player uses it for.
        public var role: Role
        /// The byte range the player requests, from `#EXT-X-BYTERANGE` or `BYTERANGE=`.
        public var byteRange: ByteRangeRequest?
        /// The 1-based playlist line.
        public var line: Int

        /// Creates a reference.
        public init(uri: String, role: Role, byteRange: ByteRangeRequest? = nil, line: Int) {
            self.uri = uri
            self.role = role
            self.byteRange = byteRange
            self.line = line
        }
    }

    /// A value in the playlist that no player can use, with the line it is on.
    public struct Problem: Sendable, Hashable {
        /// ``HTTPCheckCode/manifestValueOutOfRange`` or ``HTTPCheckCode/manifestLineTooLong``.
        public var code: DiagnosticCode
        /// The 1-based playlist line.
        public var line: Int
        /// What is wrong, with the value.
        public var message: String
    }

    /// Lines beyond this are not read.
    public static let maximumLines = HLSLines.maximumLines
    /// The longest line read, in UTF-8 bytes (a signed segment URL runs to a few KiB).
    public static let maximumLineBytes = HLSLines.maximumLineBytes
    /// The longest `#EXTINF` accepted, in seconds (a day).
    public static let maximumSegmentSeconds = HLSLines.maximumSegmentSeconds
    /// Problems beyond this are counted in ``cutOff`` but not kept.
    public static let maximumProblems = 32
    /// References beyond this are not kept.
    public static let maximumReferences = 200_000

    /// Whether this is a master playlist (variants and renditions) rather than a media playlist.
    public var isMaster: Bool
    /// Whether a media playlist has `#EXT-X-ENDLIST` (VOD or a finished event).
    public var hasEndList: Bool
    /// Every reference, in playlist order.
    public var references: [Reference]
    /// How many references were beyond the limits and not kept.
    public var cutOff: Int
    /// Key URIs that cannot be fetched over HTTP (`skd:` FairPlay, `data:` inline keys), which
    /// the receiver handles without a request (or cannot handle at all).
    public var skippedKeyURIs: [String]
    /// Values no player can use (overflowing byte ranges, absurd durations, huge lines).
    public var problems: [Problem] = []

    /// The media segments, in order.
    public var segments: [Reference] { references.filter { $0.role == .segment } }

    /// The segments a sampling check fetches: the first, the middle and the last (fewer when
    /// there are fewer, none when a live playlist has none yet).
    public var sampledSegments: [Reference] { Self.sample(segments) }

    static func sample<Element>(_ items: [Element]) -> [Element] {
        guard let last = items.indices.last else { return [] }
        var indexes: [Int] = []
        for index in [0, items.count / 2, last] where !indexes.contains(index) { indexes.append(index) }
        return indexes.map { items[$0] }
    }

    /// Reads playlist text; nil when it does not start with `#EXTM3U` (an HTML error page, a
    /// DASH manifest, or garbage).
    public static func parse(_ text: String) -> HLSReferences? {
        guard let lines = HLSLines(text) else { return nil }
        var result = HLSReferences(isMaster: false, hasEndList: false, references: [], cutOff: 0, skippedKeyURIs: [])
        var lineNumber = 1
        var pendingVariant = false
        var pendingRange: HLSByteRange?
        /// Set when the segment's own tags were refused, so its URI line is skipped too.
        var pendingRefused = false
        var nextOffset: [String: Int] = [:]
        func add(_ reference: Reference) {
            if result.references.count < maximumReferences {
                result.references.append(reference)
            } else {
                result.cutOff += 1
            }
        }
        func refuse(_ code: DiagnosticCode, _ message: String) {
            if result.problems.count < maximumProblems {
                result.problems.append(Problem(code: code, line: lineNumber, message: message))
            } else {
                result.cutOff += 1
            }
        }
        for line in lines {
            lineNumber = line.number
            switch line.content {
            case .cutOff:
                result.cutOff += 1
            case .comment:
                continue
            case .tooLong(let size, let kind):
                refuse(
                    HTTPCheckCode.manifestLineTooLong,
                    "line \(lineNumber) is \(size) bytes; the limit is \(maximumLineBytes)")
                switch kind {
                case .tag:
                    // A refused tag takes its segment with it.
                    pendingRefused = true
                case .uri:
                    // A refused URI line takes its segment's tags with it.
                    (pendingRange, pendingVariant, pendingRefused) = (nil, false, false)
                case .comment:
                    break
                }
            case .tag(let tag, let value):
                switch tag {
                case "#EXT-X-STREAM-INF":
                    result.isMaster = true
                    pendingVariant = true
                case "#EXT-X-MEDIA":
                    result.isMaster = true
                    let attributes = HLSLines.attributes(value)
                    if let uri = attributes["URI"], !uri.isEmpty {
                        let type = attributes["TYPE"]?.uppercased() ?? ""
                        add(Reference(uri: uri, role: type == "SUBTITLES" ? .subtitles : .rendition, line: lineNumber))
                    }
                case "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-SESSION-KEY", "#EXT-X-SESSION-DATA":
                    // Trick-play playlists and session data are not fetched for playback.
                    result.isMaster = true
                case "#EXTINF":
                    if case .outOfRange(let number) = HLSLines.segmentDuration(value) {
                        refuse(
                            HTTPCheckCode.manifestValueOutOfRange,
                            "line \(lineNumber): #EXTINF:\(number) is not a segment duration between 0 and \(Int(maximumSegmentSeconds)) s"
                        )
                        pendingRefused = true
                    }
                case "#EXT-X-BYTERANGE":
                    pendingRange = HLSLines.byteRange(value)
                case "#EXT-X-MAP":
                    let attributes = HLSLines.attributes(value)
                    if let uri = attributes["URI"], !uri.isEmpty {
                        var range: ByteRangeRequest?
                        if let map = attributes["BYTERANGE"].flatMap(HLSLines.byteRange), map.length > 0 {
                            let first = map.offset ?? 0
                            guard let last = HLSByteRange.lastByte(from: first, length: map.length) else {
                                refuse(
                                    HTTPCheckCode.manifestValueOutOfRange,
                                    "line \(lineNumber): the EXT-X-MAP BYTERANGE \(map.length)@\(first) ends past the largest file offset"
                                )
                                continue
                            }
                            range = .closed(first, last)
                        }
                        add(Reference(uri: uri, role: .initSegment, byteRange: range, line: lineNumber))
                    }
                case "#EXT-X-KEY":
                    let attributes = HLSLines.attributes(value)
                    let method = attributes["METHOD"]?.uppercased() ?? "NONE"
                    if method != "NONE", let uri = attributes["URI"], !uri.isEmpty {
                        let format = attributes["KEYFORMAT"] ?? "identity"
                        let lower = uri.lowercasedASCII()
                        if format != "identity" || lower.hasPrefix("skd:") || lower.hasPrefix("data:") {
                            if result.skippedKeyURIs.count < 100 { result.skippedKeyURIs.append(uri) }
                        } else {
                            add(Reference(uri: uri, role: .key, line: lineNumber))
                        }
                    }
                case "#EXT-X-ENDLIST":
                    result.hasEndList = true
                default:
                    break
                }
            case .uri(let text):
                let uri = String(text)
                if pendingVariant {
                    add(Reference(uri: uri, role: .variant, line: lineNumber))
                    pendingVariant = false
                    continue
                }
                var range: ByteRangeRequest?
                if let pending = pendingRange, pending.length > 0 {
                    // Without an offset the sub-range starts where the previous one of the same
                    // resource ended (RFC 8216 §4.3.2.2).
                    let first = pending.offset ?? nextOffset[uri] ?? 0
                    if let last = HLSByteRange.lastByte(from: first, length: pending.length) {
                        range = .closed(first, last)
                        nextOffset[uri] = last + 1
                    } else {
                        refuse(
                            HTTPCheckCode.manifestValueOutOfRange,
                            "line \(lineNumber): the #EXT-X-BYTERANGE of \(pending.length) bytes from offset \(first) ends past the largest file offset"
                        )
                        pendingRefused = true
                    }
                }
                pendingRange = nil
                if pendingRefused {
                    pendingRefused = false
                    continue
                }
                add(Reference(uri: uri, role: .segment, byteRange: range, line: lineNumber))
            }
        }
        return result
    }
}
