import CastModel

/// The `Content-Type` the server sends for each file extension.
///
/// What a LOAD request *declares* (``CastMediaTypes/contentType(forExtension:)``) and what a
/// server should *send* differ in places: a server names the IANA playlist type, marks WebVTT
/// as UTF-8 so the receiver never guesses, and has to answer for files a LOAD never names
/// (fragmented-MP4 segments, AES keys, JSON sidecars). This table holds those differences and
/// falls back to CastModel's table for everything else, so the two cannot drift apart on the
/// containers they share.
public enum ServedContentTypes {
    /// What is sent for an extension neither table knows.
    public static let fallback = "application/octet-stream"

    /// Extensions whose served type differs from, or is missing in, the LOAD table.
    ///
    /// Sources: the IANA media type registry; RFC 8216 (HLS) for playlists, which names
    /// `application/vnd.apple.mpegurl`; W3C WebVTT (`text/vtt`, always UTF-8).
    public static let serverSpecific: [String: String] = [
        // Playlists and manifests.
        "m3u8": "application/vnd.apple.mpegurl",
        "m3u": "audio/x-mpegurl",
        // Segments: fragmented MP4 and CMAF pieces are fetched by the player's script, which
        // reads them as bytes; `video/mp4` is what CDNs send and what every player accepts.
        "m4s": "video/mp4",
        "cmfv": "video/mp4",
        "cmfa": "audio/mp4",
        "cmft": "application/mp4",
        "mp4a": "audio/mp4",
        "mts": "video/mp2t",
        "weba": "audio/webm",
        "ac3": "audio/ac3",
        "ec3": "audio/eac3",
        "opus": "audio/ogg",
        // HLS AES-128 keys are raw bytes.
        "key": "application/octet-stream",
        // Captions: UTF-8 declared so no receiver falls back to Latin-1.
        "vtt": "text/vtt; charset=utf-8",
        "webvtt": "text/vtt; charset=utf-8",
        "ttml": "application/ttml+xml",
        "dfxp": "application/ttml+xml",
        "xml": "application/xml",
        "srt": "application/x-subrip",
        "ass": "text/x-ssa",
        "ssa": "text/x-ssa",
        "scc": "text/x-scc",
        // Images beyond the LOAD table.
        "avif": "image/avif",
        "svg": "image/svg+xml",
        "ico": "image/x-icon",
        "apng": "image/apng",
        // Sidecars and a locally hosted receiver page.
        "json": "application/json",
        "txt": "text/plain; charset=utf-8",
        "html": "text/html; charset=utf-8",
        "htm": "text/html; charset=utf-8",
        "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8",
        "css": "text/css; charset=utf-8",
    ]

    /// Every extension the server names a type for: the server-specific ones and those
    /// the LOAD table covers.
    public static let knownExtensions: [String] = {
        let loadTable = [
            "m3u8", "m3u", "mpd", "ism", "isml", "mp4", "m4v", "m4a", "webm", "ts", "m2ts", "mp3", "ogg", "oga", "ogv",
            "opus", "wav", "flac", "aac", "jpg", "jpeg", "png", "gif", "webp", "bmp", "mkv", "mov", "avi", "flv", "wmv",
            "vtt", "ttml", "dfxp", "xml", "srt",
        ].filter { CastMediaTypes.contentType(forExtension: $0) != nil }
        return Array(Set(loadTable).union(serverSpecific.keys)).sorted()
    }()

    /// Every known extension (lower case) with the type sent for it: the server-specific
    /// table over the LOAD table, merged once so a request costs one hash lookup.
    static let table: [String: String] = {
        var table: [String: String] = [:]
        for pathExtension in knownExtensions {
            table[pathExtension] =
                serverSpecific[pathExtension] ?? CastMediaTypes.contentType(forExtension: pathExtension)
        }
        return table
    }()

    /// The `Content-Type` to send for a file with extension `pathExtension` (without the dot,
    /// any case).
    ///
    /// ```swift
    /// ServedContentTypes.contentType(forExtension: "m3u8")  // "application/vnd.apple.mpegurl"
    /// ServedContentTypes.contentType(forExtension: "VTT")   // "text/vtt; charset=utf-8"
    /// ServedContentTypes.contentType(forExtension: "bin")   // "application/octet-stream"
    /// ```
    public static func contentType(forExtension pathExtension: String) -> String {
        contentType(forExtensionBytes: pathExtension.utf8[...])
    }

    /// The `Content-Type` for a file name or URL path, from the text after its last dot.
    public static func contentType(forFileName name: String) -> String {
        let bytes = name.utf8
        let start = bytes.lastIndex(of: UInt8(ascii: "/")).map { bytes.index(after: $0) } ?? bytes.startIndex
        guard let dot = bytes[start...].lastIndex(of: UInt8(ascii: ".")), dot != start else { return fallback }
        return contentType(forExtensionBytes: bytes[bytes.index(after: dot)...])
    }

    /// Longer extensions are unknown without a lookup: the longest in the table has 6
    /// characters, and no character takes more than 4 bytes before lower-casing.
    private static let maximumExtensionBytes = 24

    /// Looks up an extension given as UTF-8. An extension this short fits in a small (inline)
    /// string, so the key is built without allocating; it is lower-cased only when it holds an
    /// upper-case or non-ASCII byte (the Kelvin sign lower-cases to an ASCII `k`).
    private static func contentType(forExtensionBytes bytes: Substring.UTF8View) -> String {
        guard !bytes.isEmpty, bytes.count <= maximumExtensionBytes else { return fallback }
        var key = String(Substring(bytes))
        if bytes.contains(where: { ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) || $0 >= 0x80 }) {
            key = key.lowercased()
        }
        return table[key] ?? fallback
    }
}
