import JSONSupport

/// Small, allocation-free readings of URL text shared by the validator and the catalog readers.
///
/// Foundation's `URL` is not used here on purpose: these run for every URL of every item, and
/// they must treat hostile text (spaces, control characters) as text rather than fail.
public enum URLSyntax {
    /// The lower-cased scheme (`http`, `file`…) when `text` starts with one, per RFC 3986:
    /// a letter, then letters, digits, `+`, `-` or `.`, then `:`. One-letter schemes are taken
    /// to be Windows drive letters (`c:`), not schemes.
    public static func scheme(of text: String) -> String? {
        text.withUTF8Bytes { bytes in
            schemeLength(ofBytes: bytes).map {
                String(decoding: UnsafeBufferPointer(rebasing: bytes[..<$0]), as: UTF8.self).lowercased()
            }
        }
    }

    /// Whether `text` starts with a scheme (``scheme(of:)`` is not nil), without building it:
    /// catalog readers ask this of every reference.
    public static func hasScheme(_ text: String) -> Bool {
        text.withUTF8Bytes { schemeLength(ofBytes: $0) != nil }
    }

    /// The length in bytes of the scheme `bytes` start with, the bytes before the first `:`,
    /// when they are one (a letter, then scheme bytes; two at least); nil otherwise.
    private static func schemeLength(ofBytes bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = bytes.first, isLetter(first) else { return nil }
        // The scheme's bytes run to the first ":"; any other byte before it means there is none.
        var index = 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: ":") { return index > 1 ? index : nil }
            guard isSchemeByte(byte) else { return nil }
            index += 1
        }
        return nil
    }

    /// The lower-cased extension of the last path segment, ignoring query and fragment:
    /// `https://h/a/Movie.MP4?x=1` gives `mp4`; `notes` gives nil.
    public static func pathExtension(of text: String) -> String? {
        // A native string's bytes are contiguous: one indexed pass over them, not the generic
        // UTF-8 view (this runs several times for every URL of a catalog).
        if let found = text.utf8.withContiguousStorageIfAvailable(pathExtension(ofBytes:)) { return found }
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

    /// ``pathExtension(of:)`` on the UTF-8 bytes of the text.
    private static func pathExtension(ofBytes bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let range = pathExtensionRange(inBytes: bytes) else { return nil }
        return lowerCased(UnsafeBufferPointer(rebasing: bytes[range]))
    }

    /// Where the extension of the last path segment lies in `bytes` (as written), ignoring
    /// query and fragment; nil when there is none.
    private static func pathExtensionRange(inBytes bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        // The path ends at the first "?" or "#", found eight bytes at a time.
        let end = ByteWord.firstMatch(
            in: bytes, from: 0, word: { ByteWord.equal($0, to: 0x3F) | ByteWord.equal($0, to: 0x23) },
            byte: { $0 == 0x3F || $0 == 0x23 })
        var dot = -1
        var start = end
        while start > 0, bytes[start - 1] != 0x2F {
            start -= 1
            if dot < 0, bytes[start] == 0x2E { dot = start }
        }
        // A name that starts with its only dot (".profile") has no extension; neither does "a.".
        guard dot > start, dot + 1 < end else { return nil }
        return (dot + 1)..<end
    }

    /// The text of extension bytes, lower-cased as ``pathExtension(of:)`` gives it.
    private static func lowerCased(_ ext: UnsafeBufferPointer<UInt8>) -> String {
        guard ext.allSatisfy({ $0 < 0x80 }) else { return String(decoding: ext, as: UTF8.self).lowercased() }
        return String(unsafeUninitializedCapacity: ext.count) { buffer in
            for (index, byte) in ext.enumerated() { buffer[index] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }
            return ext.count
        }
    }

    /// What `table` gives for ``pathExtension(of:)`` of `text`, without making the extension's
    /// string: looked up from its bytes as written (nearly always lower case already), and
    /// lower-cased only when that misses. The validator asks this of every URL of every item.
    static func value<Value>(forPathExtensionOf text: String, in table: ShortKeyTable<Value>) -> Value? {
        text.withUTF8Bytes { bytes -> Value? in
            guard let range = pathExtensionRange(inBytes: bytes) else { return nil }
            let ext = UnsafeBufferPointer(rebasing: bytes[range])
            if let value = table.value(forKeyBytes: ext) { return value }
            guard ext.contains(where: { ($0 >= 0x41 && $0 <= 0x5A) || $0 >= 0x80 }) else { return nil }
            return table[lowerCased(ext)]
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        let lower = byte | 0x20
        return lower >= 0x61 && lower <= 0x7A
    }

    private static func isSchemeByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2D || byte == 0x2E
    }
}
