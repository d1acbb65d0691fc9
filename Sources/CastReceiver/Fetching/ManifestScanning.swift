/// What the receiver's fetch needs from an HLS playlist: the first variant, the first
/// segment and init section, and the total duration of a finished playlist.
///
/// A scan, not a parser: MediaProbe has the full HLS model; this reads only the lines a
/// player needs to start.
struct HLSPlaylistScan {
    var firstVariantURI: String?
    var initSectionURI: String?
    var firstSegmentURI: String?
    /// The `EXTINF` sum, when the playlist has `#EXT-X-ENDLIST` (a live playlist has no length).
    var duration: Double?

    /// Returns nil when `text` is not a playlist (no `#EXTM3U` first).
    init?(_ text: String) {
        var lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
            .map { $0.stripping(" \t\r") }
            .filter { !$0.isEmpty }
        if let first = lines.first, first.hasPrefix("\u{FEFF}") { lines[0] = String(first.dropFirst()) }
        guard lines.first?.hasPrefix("#EXTM3U") == true else { return nil }
        var total = 0.0
        var sawEnd = false
        var expectVariant = false
        var expectSegment = false
        for line in lines.dropFirst() {
            if line.hasPrefix("#") {
                if line.hasPrefix("#EXT-X-STREAM-INF") {
                    expectVariant = true
                } else if line.hasPrefix("#EXTINF:") {
                    expectSegment = true
                    let value = line.dropFirst("#EXTINF:".count).prefix { $0 != "," }
                    if let seconds = Double(value.stripping(" ")), seconds.isFinite, seconds >= 0 { total += seconds }
                } else if line.hasPrefix("#EXT-X-MAP:"), initSectionURI == nil {
                    initSectionURI = Self.attribute("URI", in: line)
                } else if line.hasPrefix("#EXT-X-ENDLIST") {
                    sawEnd = true
                }
                continue
            }
            if expectVariant, firstVariantURI == nil { firstVariantURI = line }
            if expectSegment, firstSegmentURI == nil { firstSegmentURI = line }
            expectVariant = false
            expectSegment = false
        }
        if firstVariantURI != nil {
            initSectionURI = nil
            firstSegmentURI = nil
        }
        duration = sawEnd && total > 0 ? total : nil
    }

    /// The quoted value of `name` in an attribute list (`URI="init.mp4"`).
    static func attribute(_ name: String, in line: String) -> String? {
        guard let range = line.firstRange(of: name + "=\"") else { return nil }
        let rest = line[range.upperBound...]
        guard let close = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<close])
    }
}

/// What the receiver's fetch needs from a DASH manifest, read without an XML parser: whether
/// it is an MPD with a period, its duration, and the URL of one segment to try.
struct DASHManifestScan {
    var isMPD = false
    var hasPeriod = false
    var duration: Double?
    var firstSegmentURI: String?

    init(_ text: String) {
        isMPD = text.contains("<MPD")
        hasPeriod = text.contains("<Period")
        guard isMPD else { return }
        if let mpdTag = Self.firstTag("MPD", in: text), let value = Self.attribute("mediaPresentationDuration", in: mpdTag) {
            duration = Self.seconds(iso8601: value)
        }
        let representation = Self.firstTag("Representation", in: text)
        if let template = Self.firstTag("SegmentTemplate", in: text) {
            let pattern = Self.attribute("initialization", in: template) ?? Self.attribute("media", in: template)
            if let pattern {
                firstSegmentURI = pattern
                    .replacing("$RepresentationID$", with: representation.flatMap { Self.attribute("id", in: $0) } ?? "")
                    .replacing("$Bandwidth$", with: representation.flatMap { Self.attribute("bandwidth", in: $0) } ?? "")
                    .replacing("$Number$", with: Self.attribute("startNumber", in: template) ?? "1")
                    .replacing("$Time$", with: "0")
            }
        } else if let open = text.firstRange(of: "<BaseURL>"), let close = text[open.upperBound...].firstRange(of: "</BaseURL>") {
            let value = text[open.upperBound..<close.lowerBound].stripping(" \t\r\n")
            if !value.isEmpty { firstSegmentURI = value }
        }
        if let uri = firstSegmentURI, uri.contains("$") || uri.isEmpty { firstSegmentURI = nil }
        firstSegmentURI = firstSegmentURI.map { $0.replacing("&amp;", with: "&") }
    }

    /// The text of the first `<name …>` start tag.
    static func firstTag(_ name: String, in text: String) -> String? {
        var searchStart = text.startIndex
        while let open = text[searchStart...].firstRange(of: "<" + name) {
            let after = text[open.upperBound...]
            if let next = after.first, next == " " || next == ">" || next == "\n" || next == "\t" || next == "\r" || next == "/" {
                guard let close = after.firstIndex(of: ">") else { return nil }
                return String(text[open.lowerBound...close])
            }
            searchStart = open.upperBound
        }
        return nil
    }

    /// An attribute's value in a start tag (double or single quotes).
    static func attribute(_ name: String, in tag: String) -> String? {
        for quote in ["\"", "'"] {
            var searchStart = tag.startIndex
            while let range = tag[searchStart...].firstRange(of: name + "=" + quote) {
                let before = range.lowerBound == tag.startIndex ? " " : tag[tag.index(before: range.lowerBound)]
                let rest = tag[range.upperBound...]
                if before == " " || before == "\n" || before == "\t" || before == "\r", let close = rest.firstIndex(of: Character(quote)) {
                    return String(rest[..<close])
                }
                searchStart = range.upperBound
            }
        }
        return nil
    }

    /// Seconds in an ISO 8601 duration such as `PT1H2M3.5S` or `P1DT2H`.
    static func seconds(iso8601 text: String) -> Double? {
        guard text.hasPrefix("P") else { return nil }
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
        return number.isEmpty && total > 0 ? total : nil
    }
}

/// Reads the movie duration from the start of an MP4 (`moov` → `mvhd`), when `moov` is there
/// (a fast-start file).
enum MP4Boxes {
    static func looksLikeMP4(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 8 && [Array("ftyp".utf8), Array("moov".utf8), Array("styp".utf8)].contains(Array(bytes[4..<8]))
    }

    static func movieDuration(in bytes: [UInt8]) -> Double? {
        guard let moov = box("moov", in: bytes[...]), let mvhd = box("mvhd", in: moov), mvhd.count >= 20 else { return nil }
        let start = mvhd.startIndex
        let version = mvhd[start]
        let timescale: UInt64
        let duration: UInt64
        if version == 1 {
            guard mvhd.count >= 32 else { return nil }
            timescale = integer(mvhd, at: start + 20, width: 4)
            duration = integer(mvhd, at: start + 24, width: 8)
        } else {
            timescale = integer(mvhd, at: start + 12, width: 4)
            duration = integer(mvhd, at: start + 16, width: 4)
        }
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
                guard offset + size <= bytes.endIndex else { return nil }
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

    static func integer(_ bytes: [UInt8], at offset: Int, width: Int) -> UInt64 { integer(bytes[...], at: offset, width: width) }
}
