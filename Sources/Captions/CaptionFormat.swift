/// A caption file format CastPrep reads.
///
/// Media containers (MP4, MKV, TS) with embedded text subtitle streams are read by
/// ``EmbeddedSubtitleExtractor`` instead, because they need FFmpeg and a file path.
public enum CaptionFormat: String, Sendable, Hashable, CaseIterable, Codable {
    /// SubRip `.srt`.
    case srt
    /// WebVTT `.vtt`.
    case webVTT = "vtt"
    /// TTML, DFXP and IMSC1 text profile (`.ttml`, `.dfxp`, `.xml`).
    case ttml
    /// SubStation Alpha / Advanced SubStation Alpha (`.ssa`, `.ass`).
    case ass
    /// Scenarist SCC, CEA-608 channel 1 (`.scc`).
    case scc

    /// Looks a format up by the name a user types after `--from`: `srt`, `vtt`/`webvtt`,
    /// `ttml`/`dfxp`/`imsc`/`xml`, `ass`/`ssa`, `scc`; case-insensitive. Nil if unknown.
    public init?(name: String) {
        switch name.trimmingASCIIWhitespace().lowercased() {
        case "srt", "subrip": self = .srt
        case "vtt", "webvtt": self = .webVTT
        case "ttml", "dfxp", "imsc", "imsc1", "xml", "ttml2": self = .ttml
        case "ass", "ssa": self = .ass
        case "scc": self = .scc
        default: return nil
        }
    }

    /// The format for a file extension (without the dot), or nil.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "srt": self = .srt
        case "vtt", "webvtt": self = .webVTT
        case "ttml", "dfxp", "xml", "imsc": self = .ttml
        case "ass", "ssa": self = .ass
        case "scc": self = .scc
        default: return nil
        }
    }

    /// Sniffs the format from the first bytes of the content; nil if nothing matches.
    ///
    /// Looks past a UTF-8/UTF-16 BOM and leading blank lines for `WEBVTT`,
    /// `Scenarist_SCC`, `[Script Info]`/`[Events]`, an XML prolog or `<tt`, and an SRT
    /// timing line (`00:00:01,000 -->`) within the first lines.
    public static func sniff(_ data: [UInt8]) -> CaptionFormat? {
        let decoded = TextDecoder.decode(Array(data.prefix(4096)), forced: nil)
        let text = String(decoding: decoded.bytes, as: UTF8.self)
        let trimmed = text.drop { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        if trimmed.hasPrefix("WEBVTT") { return .webVTT }
        if trimmed.hasPrefix("Scenarist_SCC") { return .scc }
        let lower = trimmed.prefix(512).lowercased()
        if lower.hasPrefix("[script info]") || lower.hasPrefix("[v4") || lower.hasPrefix("[events]") { return .ass }
        if lower.hasPrefix("<?xml") || lower.hasPrefix("<tt") || lower.contains("<tt ") || lower.contains("<tt:tt") {
            return .ttml
        }
        for line in trimmed.split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }).prefix(6)
        where line.contains("-->") {
            return line.contains(",") ? .srt : .webVTT
        }
        return nil
    }

    /// Picks the format from content sniffing, then the extension (an explicit `--from`
    /// should bypass this entirely).
    ///
    /// Content beats the extension because mislabelled files are common (a `.srt` that
    /// is really WebVTT, a `.xml` that is DFXP); the extension only decides when the content
    /// says nothing.
    public static func detect(fileExtension: String?, data: [UInt8]) -> CaptionFormat? {
        if let sniffed = sniff(data) { return sniffed }
        if let fileExtension { return CaptionFormat(fileExtension: fileExtension) }
        return nil
    }
}
