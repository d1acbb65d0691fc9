public import CastModel

/// The URLs an HLS playlist makes a player fetch, read line by line (RFC 8216 §4).
///
/// This is a reference walker, not a full playlist model: it keeps what the receiver will
/// request — variant and rendition playlists from a master playlist; segments with their byte
/// ranges, `EXT-X-MAP` initialisation sections and `EXT-X-KEY` keys from a media playlist —
/// with the line each came from, so findings can point into the playlist. (MediaProbe has a
/// fuller parser, but it links FFmpeg, which this module must not.)
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
    public static let maximumLines = 500_000
    /// The longest line read, in UTF-8 bytes. Signed segment URLs run to a few KiB; a line
    /// of megabytes is an attack or a broken packager, and reading it costs time and memory.
    public static let maximumLineBytes = 64 << 10
    /// The longest `#EXTINF` accepted, in seconds (a day). RFC 8216 §4.3.3.1 caps each
    /// segment at the target duration, which packagers set to seconds; a day leaves room for
    /// single-segment audio playlists while keeping every sum of durations exact in a player's
    /// microsecond clock.
    public static let maximumSegmentSeconds = 86_400.0
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
        var result = HLSReferences(isMaster: false, hasEndList: false, references: [], cutOff: 0, skippedKeyURIs: [])
        var lineNumber = 0
        var sawHeader = false
        var pendingVariant = false
        var pendingRange: (length: Int, offset: Int?)?
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
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            lineNumber += 1
            if lineNumber > maximumLines {
                result.cutOff += 1
                break
            }
            let size = rawLine.utf8.count
            guard size <= maximumLineBytes else {
                guard sawHeader else { return nil }
                refuse(HTTPCheckCode.manifestLineTooLong, "line \(lineNumber) is \(size) bytes; the limit is \(maximumLineBytes)")
                if rawLine.hasPrefix("#EXT") {
                    // A refused tag takes its segment with it.
                    pendingRefused = true
                } else if !rawLine.hasPrefix("#") {
                    // A refused URI line takes its segment's tags with it.
                    (pendingRange, pendingVariant, pendingRefused) = (nil, false, false)
                }
                continue
            }
            var line = Substring(rawLine.trimmingHTTPSpaces())
            if line.hasSuffix("\r") { line = line.dropLast() }
            if !sawHeader {
                if line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
                guard line.hasPrefix("#EXTM3U") else { return nil }
                sawHeader = true
                continue
            }
            guard !line.isEmpty else { continue }
            if line.hasPrefix("#") {
                guard line.hasPrefix("#EXT") else { continue }  // a comment
                let (tag, value) = split(tag: line)
                switch tag {
                case "#EXT-X-STREAM-INF":
                    result.isMaster = true
                    pendingVariant = true
                case "#EXT-X-MEDIA":
                    result.isMaster = true
                    let attributes = attributeList(value)
                    if let uri = attributes["URI"], !uri.isEmpty {
                        let type = attributes["TYPE"]?.uppercased() ?? ""
                        add(Reference(uri: uri, role: type == "SUBTITLES" ? .subtitles : .rendition, line: lineNumber))
                    }
                case "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-SESSION-KEY", "#EXT-X-SESSION-DATA":
                    // Trick-play playlists and session data are not fetched for playback.
                    result.isMaster = true
                case "#EXTINF":
                    let number = value.prefix { $0 != "," }.trimmingHTTPSpaces()
                    if let seconds = Double(number), !(0...maximumSegmentSeconds).contains(seconds) {
                        refuse(HTTPCheckCode.manifestValueOutOfRange,
                               "line \(lineNumber): #EXTINF:\(number.prefix(40)) is not a segment duration between 0 and \(Int(maximumSegmentSeconds)) s")
                        pendingRefused = true
                    }
                case "#EXT-X-BYTERANGE":
                    pendingRange = byteRange(value)
                case "#EXT-X-MAP":
                    let attributes = attributeList(value)
                    if let uri = attributes["URI"], !uri.isEmpty {
                        var range: ByteRangeRequest?
                        if let (length, offset) = attributes["BYTERANGE"].flatMap(byteRange), length > 0 {
                            guard let last = lastByte(from: offset ?? 0, length: length) else {
                                refuse(HTTPCheckCode.manifestValueOutOfRange,
                                       "line \(lineNumber): the EXT-X-MAP BYTERANGE \(length)@\(offset ?? 0) ends past the largest file offset")
                                continue
                            }
                            range = .closed(offset ?? 0, last)
                        }
                        add(Reference(uri: uri, role: .initSegment, byteRange: range, line: lineNumber))
                    }
                case "#EXT-X-KEY":
                    let attributes = attributeList(value)
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
                continue
            }
            let uri = String(line)
            if pendingVariant {
                add(Reference(uri: uri, role: .variant, line: lineNumber))
                pendingVariant = false
                continue
            }
            var range: ByteRangeRequest?
            if let (length, offset) = pendingRange, length > 0 {
                // Without an offset the sub-range starts where the previous one of the same
                // resource ended (RFC 8216 §4.3.2.2).
                let first = offset ?? nextOffset[uri] ?? 0
                if let last = lastByte(from: first, length: length) {
                    range = .closed(first, last)
                    nextOffset[uri] = last + 1
                } else {
                    refuse(HTTPCheckCode.manifestValueOutOfRange,
                           "line \(lineNumber): the #EXT-X-BYTERANGE of \(length) bytes from offset \(first) ends past the largest file offset")
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
        return sawHeader ? result : nil
    }

    /// The offset of the last byte of `length` bytes from `first`, or nil when it is past
    /// `Int.max` (lengths and offsets come from the server; their sum must not trap).
    static func lastByte(from first: Int, length: Int) -> Int? {
        let (end, overflow) = first.addingReportingOverflow(length)
        return overflow ? nil : end - 1
    }

    /// `#EXT-X-TAG:value` → (`#EXT-X-TAG`, `value`).
    static func split(tag line: Substring) -> (Substring, Substring) {
        guard let colon = line.firstIndex(of: ":") else { return (line, "") }
        return (line[..<colon], line[line.index(after: colon)...])
    }

    /// `<length>[@<offset>]`, both decimal; nil when malformed.
    static func byteRange<S: StringProtocol>(_ text: S) -> (length: Int, offset: Int?)? {
        let parts = text.trimmingHTTPSpaces().split(separator: "@", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let length = ContentRange.decimal(parts[0]) else { return nil }
        if parts.count == 2 {
            guard let offset = ContentRange.decimal(parts[1]) else { return nil }
            return (length, offset)
        }
        return (length, nil)
    }

    /// An attribute list, `KEY=value,KEY="quoted, value"` (RFC 8216 §4.2). Keys are upper-cased;
    /// quotes are removed.
    static func attributeList<S: StringProtocol>(_ text: S) -> [String: String] {
        var result: [String: String] = [:]
        var key = ""
        var value = ""
        var readingKey = true
        var inQuotes = false
        func flush() {
            let name = key.trimmingHTTPSpaces().uppercased()
            if !name.isEmpty, result.count < 64 { result[name] = value.trimmingHTTPSpaces() }
            key = ""
            value = ""
            readingKey = true
        }
        for character in text.prefix(16_384) {
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
