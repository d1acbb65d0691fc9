/// Small, allocation-free readings of URL text shared by the validator and the catalog readers.
///
/// Foundation's `URL` is not used here on purpose: these run for every URL of every item, and
/// they must treat hostile text (spaces, control characters) as text rather than fail.
public enum URLSyntax {
    /// The lower-cased scheme (`http`, `file`…) when `text` starts with one, per RFC 3986:
    /// a letter, then letters, digits, `+`, `-` or `.`, then `:`. One-letter schemes are taken
    /// to be Windows drive letters (`c:`), not schemes.
    public static func scheme(of text: String) -> String? {
        guard let colon = text.utf8.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let scheme = text.utf8[..<colon]
        guard scheme.count > 1, let first = scheme.first, isLetter(first), scheme.allSatisfy(isSchemeByte) else {
            return nil
        }
        return String(decoding: scheme, as: UTF8.self).lowercased()
    }

    /// The lower-cased extension of the last path segment, ignoring query and fragment:
    /// `https://h/a/Movie.MP4?x=1` gives `mp4`; `notes` gives nil.
    public static func pathExtension(of text: String) -> String? {
        // On bytes: "?", "#", "/" and "." are ASCII, so their byte positions are character
        // boundaries; this runs for every URL of a catalog.
        var path = text.utf8[...]
        if let cut = path.firstIndex(where: { $0 == 0x3F || $0 == 0x23 }) { path = path[..<cut] }
        let name = path.lastIndex(of: 0x2F).map { path[path.index(after: $0)...] } ?? path
        guard let dot = name.lastIndex(of: 0x2E), dot != name.startIndex else { return nil }
        let ext = name[name.index(after: dot)...]
        guard !ext.isEmpty else { return nil }
        guard ext.allSatisfy({ $0 < 0x80 }) else { return String(Substring(ext)).lowercased() }
        return String(decoding: ext.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        let lower = byte | 0x20
        return lower >= 0x61 && lower <= 0x7A
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2D || byte == 0x2E
    }
}
