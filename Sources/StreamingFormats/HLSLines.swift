/// The lines of an HLS playlist (RFC 8216 §4.1), read once for every module that reads
/// playlists: the header check, line numbering, tags, attribute lists, `#EXTINF` durations and
/// byte ranges.
///
/// Bounded for hostile input: at most ``maximumLines`` lines are read (the line after them is
/// reported as ``HLSLine/Content/cutOff``), a line longer than ``maximumLineBytes`` is reported
/// as ``HLSLine/Content/tooLong(bytes:kind:)`` without being read, and attribute lists are read
/// up to ``maximumAttributeCharacters`` characters and ``maximumAttributes`` attributes. Lines
/// end at LF or CRLF; blank lines and the header are counted but not reported.
public struct HLSLines: Sequence, Sendable {
    /// Lines beyond this are not read.
    public static let maximumLines = 500_000
    /// The longest line read, in UTF-8 bytes. Signed segment URLs run to a few KiB; a line of
    /// megabytes is an attack or a broken packager, and reading it costs time and memory.
    public static let maximumLineBytes = 64 << 10
    /// The longest `#EXTINF` accepted, in seconds (a day). RFC 8216 §4.3.3.1 caps each segment
    /// at the target duration, which packagers set to seconds; a day leaves room for
    /// single-segment audio playlists while keeping every sum of durations exact in a player's
    /// microsecond clock.
    public static let maximumSegmentSeconds = 86_400.0
    /// Attribute-list characters read per tag.
    public static let maximumAttributeCharacters = 16_384
    /// Attributes kept per attribute list.
    public static let maximumAttributes = 64

    let text: String
    let body: String.Index

    /// The lines of `text`, or nil when its first line is not `#EXTM3U` (after an optional
    /// byte order mark): an HTML error page, a DASH manifest or garbage.
    public init?(_ text: String) {
        let end = text.firstIndex { $0 == "\n" || $0 == "\r\n" } ?? text.endIndex
        let first = text[..<end]
        guard first.utf8.count <= Self.maximumLineBytes else { return nil }
        var line = Self.trimmingBlanks(first)
        if line.hasSuffix("\r") { line = line.dropLast() }
        if line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
        guard line.hasPrefix("#EXTM3U") else { return nil }
        self.text = text
        self.body = end
    }

    public func makeIterator() -> Iterator { Iterator(text: text, position: body) }

    /// Walks the lines after the header.
    public struct Iterator: IteratorProtocol, Sendable {
        let text: String
        var position: String.Index
        var number = 1
        var finished = false

        public mutating func next() -> HLSLine? {
            while !finished, position < text.endIndex {
                // `position` is at the separator that ended the previous line.
                let start = text.index(after: position)
                let end = text[start...].firstIndex { $0 == "\n" || $0 == "\r\n" } ?? text.endIndex
                position = end
                number += 1
                if number > HLSLines.maximumLines {
                    finished = true
                    return HLSLine(number: number, content: .cutOff)
                }
                let raw = text[start..<end]
                let kind: HLSLine.Kind = raw.hasPrefix("#EXT") ? .tag : raw.hasPrefix("#") ? .comment : .uri
                let size = raw.utf8.count
                guard size <= HLSLines.maximumLineBytes else {
                    return HLSLine(number: number, content: .tooLong(bytes: size, kind: kind))
                }
                var line = HLSLines.trimmingBlanks(raw)
                if line.hasSuffix("\r") { line = line.dropLast() }
                guard !line.isEmpty else { continue }
                if line.hasPrefix("#") {
                    guard line.hasPrefix("#EXT") else { return HLSLine(number: number, content: .comment) }
                    guard let colon = line.firstIndex(of: ":") else {
                        return HLSLine(number: number, content: .tag(line, ""))
                    }
                    return HLSLine(number: number, content: .tag(line[..<colon], line[line.index(after: colon)...]))
                }
                return HLSLine(number: number, content: .uri(line))
            }
            return nil
        }
    }

    /// Without leading and trailing spaces and tabs.
    static func trimmingBlanks(_ text: Substring) -> Substring {
        var view = text
        while let first = view.first, first == " " || first == "\t" { view.removeFirst() }
        while let last = view.last, last == " " || last == "\t" { view.removeLast() }
        return view
    }

    /// Reads an attribute list, `KEY=value,KEY="quoted, value"` (RFC 8216 §4.2): keys are
    /// upper-cased, quotes are removed, blanks around keys and values are dropped.
    public static func attributes(_ text: some StringProtocol) -> [String: String] {
        var result: [String: String] = [:]
        var key = ""
        var value = ""
        var readingKey = true
        var inQuotes = false
        func flush() {
            let name = trimmingBlanks(Substring(key)).uppercased()
            if !name.isEmpty, result.count < maximumAttributes {
                result[name] = String(trimmingBlanks(Substring(value)))
            }
            key = ""
            value = ""
            readingKey = true
        }
        for character in text.prefix(maximumAttributeCharacters) {
            if readingKey {
                if character == "=" {
                    readingKey = false
                } else if character == "," {
                    flush()
                } else {
                    key.append(character)
                }
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

    /// What an `#EXTINF` value (`<duration>,[<title>]`) says about the segment's length.
    public static func segmentDuration(_ value: Substring) -> HLSSegmentDuration {
        let number = trimmingBlanks(value.prefix { $0 != "," })
        guard let seconds = Double(number) else { return .unreadable }
        guard (0...maximumSegmentSeconds).contains(seconds) else { return .outOfRange(String(number.prefix(40))) }
        return .seconds(seconds)
    }

    /// A byte range, `<length>[@<offset>]` with both decimal (RFC 8216 §4.3.2.2); nil when
    /// malformed or when a number has more than 18 digits.
    public static func byteRange(_ text: some StringProtocol) -> HLSByteRange? {
        let parts = trimmingBlanks(Substring(text)).split(separator: "@", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), let length = decimal(parts[0]) else { return nil }
        guard parts.count == 2 else { return HLSByteRange(length: length, offset: nil) }
        guard let offset = decimal(parts[1]) else { return nil }
        return HLSByteRange(length: length, offset: offset)
    }

    /// A non-negative decimal of at most 18 digits (so it always fits in `Int`).
    public static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            return nil
        }
        return Int(text)
    }
}

/// One line of a playlist, with its 1-based number.
public struct HLSLine: Sendable, Hashable {
    /// What a line starts with.
    public enum Kind: Sendable, Hashable {
        /// `#EXT…`
        case tag
        /// `#` without `EXT`.
        case comment
        /// Anything else: a URI.
        case uri
    }

    /// What the line holds.
    public enum Content: Sendable, Hashable {
        /// A tag and its value: `#EXT-X-KEY:METHOD=NONE` is `("#EXT-X-KEY", "METHOD=NONE")`.
        case tag(Substring, Substring)
        /// A comment.
        case comment
        /// A URI (blanks trimmed).
        case uri(Substring)
        /// A line longer than ``HLSLines/maximumLineBytes``, which is not read.
        case tooLong(bytes: Int, kind: Kind)
        /// The line after ``HLSLines/maximumLines``: nothing more is read.
        case cutOff
    }

    public var number: Int
    public var content: Content

    public init(number: Int, content: Content) {
        self.number = number
        self.content = content
    }
}

/// What an `#EXTINF` value says.
public enum HLSSegmentDuration: Sendable, Hashable {
    /// A duration in `0...`\(``HLSLines/maximumSegmentSeconds``).
    case seconds(Double)
    /// A number no player holds (negative, past a day, infinite or NaN), as written (at most 40
    /// characters).
    case outOfRange(String)
    /// Not a number.
    case unreadable
}

/// An `#EXT-X-BYTERANGE` or `BYTERANGE=` value.
public struct HLSByteRange: Sendable, Hashable {
    public var length: Int
    /// The first byte; nil when the range follows the previous one of the same resource.
    public var offset: Int?

    public init(length: Int, offset: Int?) {
        self.length = length
        self.offset = offset
    }

    /// The offset of the last byte of `length` bytes from `first`, or nil when it is past
    /// `Int.max` (lengths and offsets come from the server; their sum must not trap).
    public static func lastByte(from first: Int, length: Int) -> Int? {
        let (end, overflow) = first.addingReportingOverflow(length)
        return overflow ? nil : end - 1
    }
}
