@testable import Catalog
import Testing
import TestSupport

/// The plain-base check judges eight bytes at a time; it must say what the plain rule says —
/// an http(s) base ending in "/", with no blank, "?" or "#" (other text, non-ASCII too, is
/// allowed) — for every text, including those whose stop byte sits in a word's last byte, just
/// after it, or in the tail.
@Suite("URLResolver's plain directory base")
struct URLResolverBaseTests {
    /// The rule, written the slow way.
    static func isPlain(_ text: String) -> Bool {
        (text.hasPrefix("https://") || text.hasPrefix("http://")) && text.hasSuffix("/")
            && !text.utf8.contains { $0 <= 0x20 || $0 == 0x3F || $0 == 0x23 }
    }

    @Test(
        "known bases",
        arguments: [
            ("https://cdn.example.com/hls/", true), ("http://a/", true), ("https://a.example.com/x", false),
            ("https://a.example.com/x?y=1/", false), ("https://a.example.com/#/", false),
            ("https://a.example.com/a b/", false), ("https://a.example.com/\t/", false),
            ("https://a.example.com/é/", true), ("ftp://a.example.com/", false), ("", false), ("/", false),
            ("https://cdn.example.com/videos/2024/~x_y-z/", true), ("HTTPS://cdn.example.com/", false),
        ])
    func known(text: String, plain: Bool) {
        #expect(URLResolver.isPlainDirectoryBase(text) == plain)
        #expect(Self.isPlain(text) == plain)
    }

    @Test("generated texts of every length up to 48 bytes agree with the slow rule")
    func generated() {
        var random = SeededGenerator(seed: 20)
        let pieces = ["a", "Z", "0", "/", ".", "-", "~", ":", "?", "#", " ", "\t", "\u{7F}", "é", "\u{1}"]
        for _ in 0..<20_000 {
            let length = Int(random.next() % 49)
            var text = random.next() % 2 == 0 ? "https://" : "http://"
            for _ in 0..<length {
                // Mostly plain bytes, so a stop lands at every position of a word in turn.
                let plainOnly = random.next() % 8 != 0
                text += plainOnly ? pieces[Int(random.next() % 7)] : pieces[Int(random.next() % UInt64(pieces.count))]
            }
            if random.next() % 4 != 0 { text += "/" }
            #expect(URLResolver.isPlainDirectoryBase(text) == Self.isPlain(text), "\(text.debugDescription)")
        }
    }

    @Test("a base judged once resolves every reference as the base's text does")
    func judgedOnce() {
        let resolver = URLResolver(catalogPath: "/srv/catalog/f.json")
        let bases = [
            "https://cdn.example.com/hls/", "https://cdn.example.com/hls", "http://a/b/?x=1", "https://a/é/", "media/",
            "", " https://cdn.example.com/x/ ", "file:///srv/media/",
        ]
        let references = [
            "v/master.m3u8", "../up.mp4", "./here.mp4", "/root.mp4", "https://other.example.com/a.mp4", " spaced.mp4 ",
            "a b.mp4", "q.mp4?x=1", "", "v//x.mp4", "~user/x.mp4",
        ]
        for base in bases {
            let judged = URLResolver.Base(base)
            #expect(judged.isPlainDirectory == URLResolver.isPlainDirectoryBase(base))
            for reference in references {
                #expect(
                    resolver.resolve(reference, base: judged) == resolver.resolve(reference, base: base),
                    "\(reference) against \(base)")
            }
        }
        let category = CategoryBases(["hls": "https://cdn.example.com/hls/", "images": "https://img.example.com/"])
        #expect(category["hls"]?.text == "https://cdn.example.com/hls/")
        #expect(category["images"]?.isPlainDirectory == true)
        #expect(category["dash"] == nil && category["smooth"] == nil)
        #expect(category == ["images": "https://img.example.com/", "hls": "https://cdn.example.com/hls/"])
    }
}

/// A source's kind is its type lower-cased; text already lower-case ASCII is kept as it is.
@Suite("A source kind from its type")
struct SourceKindTests {
    @Test(
        "is the type in lower case",
        arguments: [("hls", "hls"), ("HLS", "hls"), ("Dash", "dash"), ("mp4", "mp4"), ("webm", "webm"), ("ÉTÉ", "été")])
    func lowerCased(type: String, kind: String) {
        #expect(MediaSource.Kind(rawValue: type).rawValue == kind)
        #expect(MediaSource.Kind(rawValue: type) == MediaSource.Kind(rawValue: kind))
    }

    /// The plain-reference rule, written the slow way: letters, digits, "-", "_", "~", and "."
    /// and "/" only right after one of those; not ending in "/".
    static func isPlainReference(_ text: String) -> Bool {
        let unreserved = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_~".utf8)
        var previous: UInt8 = 0x2F
        for byte in text.utf8 {
            if byte == 0x2E || byte == 0x2F {
                guard unreserved.contains(previous) else { return false }
            } else if !unreserved.contains(byte) {
                return false
            }
            previous = byte
        }
        return previous != 0x2F
    }

    @Test("generated references are judged plain by the byte table as by the slow rule")
    func plainReferences() {
        var random = SeededGenerator(seed: 21)
        let pieces = [
            "a", "Z", "0", "9", "-", "_", "~", "/", ".", "..", "//", "%", "?", " ", "é", ":", "\u{0}", "\u{7F}",
        ]
        for _ in 0..<20_000 {
            var text = ""
            for _ in 0..<Int(random.next() % 24) {
                let plainOnly = random.next() % 6 != 0
                text += plainOnly ? pieces[Int(random.next() % 9)] : pieces[Int(random.next() % UInt64(pieces.count))]
            }
            #expect(URLResolver.isPlainRelativePath(text) == Self.isPlainReference(text), "\(text.debugDescription)")
            let bytes = Array(text.utf8)
            #expect(
                bytes.withUnsafeBufferPointer { URLResolver.isPlainRelativePath($0) } == Self.isPlainReference(text))
        }
    }
}
