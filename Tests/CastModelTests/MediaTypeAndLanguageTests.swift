import JSONSupport
import Testing

@testable import CastModel

/// A MIME type and how it must parse.
struct MediaTypeCase: Sendable, CustomTestStringConvertible {
    var text: String
    var essence: String
    var parameters: [String]
    var codecs: [String]
    var description: String
    var testDescription: String { text }
}

@Suite("MediaType")
struct MediaTypeTests {
    static let good: [MediaTypeCase] = [
        MediaTypeCase(text: "video/mp4", essence: "video/mp4", parameters: [], codecs: [], description: "video/mp4"),
        MediaTypeCase(
            text: #"Video/MP4; Codecs="avc1.640028, mp4a.40.2""#, essence: "video/mp4",
            parameters: ["codecs=avc1.640028, mp4a.40.2"],
            codecs: ["avc1.640028", "mp4a.40.2"], description: #"video/mp4; codecs="avc1.640028, mp4a.40.2""#),
        MediaTypeCase(
            text: "audio/mp4;codecs=mp4a.40.2", essence: "audio/mp4", parameters: ["codecs=mp4a.40.2"],
            codecs: ["mp4a.40.2"],
            description: "audio/mp4; codecs=mp4a.40.2"),
        MediaTypeCase(
            text: "  video/webm ; codecs=vp9\t", essence: "video/webm", parameters: ["codecs=vp9"], codecs: ["vp9"],
            description: "video/webm; codecs=vp9"),
        MediaTypeCase(text: "text/vtt;", essence: "text/vtt", parameters: [], codecs: [], description: "text/vtt"),
        MediaTypeCase(
            text: #"text/plain; charset="utf-8"; format=flowed"#, essence: "text/plain",
            parameters: ["charset=utf-8", "format=flowed"],
            codecs: [], description: "text/plain; charset=utf-8; format=flowed"),
        MediaTypeCase(
            text: "application/vnd.apple.mpegurl", essence: "application/vnd.apple.mpegurl", parameters: [], codecs: [],
            description: "application/vnd.apple.mpegurl"),
        MediaTypeCase(
            text: #"video/mp4; codecs="hvc1.2.4.L153.B0,  ,mp4a.40.2""#, essence: "video/mp4",
            parameters: ["codecs=hvc1.2.4.L153.B0,  ,mp4a.40.2"], codecs: ["hvc1.2.4.L153.B0", "mp4a.40.2"],
            description: #"video/mp4; codecs="hvc1.2.4.L153.B0,  ,mp4a.40.2""#),
    ]

    @Test("well-formed types parse", arguments: good)
    func parses(_ testCase: MediaTypeCase) throws {
        let type = try MediaType.parse(testCase.text).get()
        #expect(type.essence == testCase.essence)
        #expect(type.parameters.map { "\($0.name)=\($0.value)" } == testCase.parameters)
        #expect(type.codecs == testCase.codecs)
        #expect(type.description == testCase.description)
        // The description parses back to the same type.
        #expect(try MediaType.parse(type.description).get() == type)
    }

    @Test(
        "malformed types fail with the reason",
        arguments: [
            ("", MediaType.ParseError.empty),
            ("   ", .empty),
            ("video", .missingSlash),
            ("vidéo/mp4", .missingSlash),
            ("video/", .invalidToken("video/")),
            ("/mp4", .invalidToken("/mp4")),
            ("video/mp4 x", .invalidToken("x")),
            ("video/mp4; codecs=avc1,mp4a", .unquotedListParameter("codecs")),
            ("video/mp4; CODECS=avc1.640028,mp4a.40.2", .unquotedListParameter("codecs")),
            (#"video/mp4; codecs="avc1"#, .unterminatedQuote),
            ("video/mp4; codecs=", .malformedParameter("codecs")),
            ("video/mp4; =x", .malformedParameter("=x")),
            ("video/mp4; codecs", .malformedParameter("")),
        ])
    func fails(text: String, error: MediaType.ParseError) {
        #expect(throws: error) { try MediaType.parse(text).get() }
    }

    @Test("a quoted value with a quote or backslash survives description and parse")
    func escapedQuotes() throws {
        let type = try MediaType.parse(#"application/x-test; note="say \"hi\"""#).get()
        #expect(type.parameters.first?.value == #"say "hi""#)
        #expect(type.description == #"application/x-test; note="say \"hi\"""#)
        #expect((try? MediaType.parse(type.description).get()) == type)
    }

    @Test("equality ignores case of type and parameter names, not of values")
    func equality() throws {
        let a = try MediaType.parse("VIDEO/MP4; CODECS=avc1").get()
        let b = try MediaType.parse("video/mp4; codecs=avc1").get()
        let c = try MediaType.parse("video/mp4; codecs=AVC1").get()
        #expect(a == b)
        #expect(a.hashValue == b.hashValue)
        #expect(a != c)
        let parsed = try MediaType.parse("video/mp4").get()
        #expect(MediaType(type: "video", subtype: "mp4") == parsed)
    }

    @Test(
        "families of content types",
        arguments: [
            ("application/x-mpegurl", CastMediaTypes.Family.hls), ("audio/mpegurl", .hls),
            ("application/dash+xml", .dash),
            ("application/vnd.ms-sstr+xml", .smooth), ("video/mp4", .progressive), ("audio/flac", .progressive),
            ("image/jpeg", .image), ("text/vtt", .text), ("video/x-matroska", .unsupported),
            ("application/x-subrip", .unsupported),
            ("videos/mp4", .unknown),
        ])
    func families(essence: String, family: CastMediaTypes.Family) {
        #expect(CastMediaTypes.family(of: essence) == family)
    }

    @Test("the family table gives every listed essence the family of the first list that holds it")
    func familyTable() {
        let lists: [(CastMediaTypes.Family, Set<String>)] = [
            (.hls, CastMediaTypes.hls), (.dash, CastMediaTypes.dash), (.smooth, CastMediaTypes.smooth),
            (.progressive, CastMediaTypes.progressive), (.image, CastMediaTypes.images),
            (.text, CastMediaTypes.textTracks), (.unsupported, Set(CastMediaTypes.unsupported.keys)),
        ]
        for essence in lists.reduce(into: Set<String>(), { $0.formUnion($1.1) }) {
            let first = lists.first { $0.1.contains(essence) }?.0
            #expect(CastMediaTypes.family(of: essence) == first, "\(essence)")
        }
    }

    @Test(
        "essence joins type and subtype",
        arguments: [("video", "mp4"), ("application", "vnd.apple.mpegurl"), ("a", "b")])
    func essence(type: String, subtype: String) {
        var mediaType = MediaType(type: type, subtype: subtype)
        #expect(mediaType.essence == type + "/" + subtype)
        // Kept in step when a part changes.
        mediaType.subtype = "webm"
        #expect(mediaType.essence == type + "/webm")
        mediaType.type = "audio"
        #expect(mediaType.essence == "audio/webm")
    }

    @Test("a bare type's essence is its lower-cased text, as the general reading gives it")
    func bareEssence() throws {
        for text in ["Video/MP4", "application/x-mpegURL", "text/vtt", "video/mp4;codecs=avc1", " video/mp4 "] {
            let parsed = try MediaType.parse(text).get()
            #expect(parsed.essence == parsed.type + "/" + parsed.subtype)
            #expect(parsed.essence == parsed.essence.lowercased())
        }
    }

    @Test(
        "parsedIfValid gives what parse gives when it succeeds, nil when it fails",
        arguments: [
            "video/mp4", "Video/MP4", " video/mp4 ", "application/x-mpegURL",
            "video/mp4; codecs=\"avc1.640028, mp4a.40.2\"",
            "text/vtt", "text/vtt;", "", "   ", "video", "video/", "/mp4", "video/mp4; codecs=avc1,mp4a", "video mp4",
            "video/mp4; =x", "video/mp4; a=\"b", "vidéo/mp4", "application/ttml+xml",
        ])
    func parsedIfValid(text: String) {
        switch MediaType.parse(text) {
        case .success(let parsed):
            #expect(MediaType.parsedIfValid(text) == parsed)
            #expect(MediaType.parsedIfValid(text)?.description == parsed.description)
        case .failure:
            #expect(MediaType.parsedIfValid(text) == nil)
        }
    }

    @Test("a known type is looked up already parsed, and is what the general reading parses")
    func knownTypesLookedUp() throws {
        let known = CastMediaTypes.hls.union(CastMediaTypes.dash).union(CastMediaTypes.smooth)
            .union(CastMediaTypes.progressive).union(CastMediaTypes.images).union(CastMediaTypes.textTracks)
            .union(CastMediaTypes.unsupported.keys)
        for essence in known {
            let looked = try MediaType.parse(essence).get()
            // Spaces around it keep it from the lookup and the bare reading: the general one.
            let general = try MediaType.parse(" \(essence) ").get()
            #expect(looked == general, "\(essence)")
            #expect(looked.type == general.type && looked.subtype == general.subtype, "\(essence)")
            #expect(looked.essence == essence && looked.parameters.isEmpty, "\(essence)")
        }
        // Another case of a known type is not a known key: read, and lower-cased, as before.
        #expect(try MediaType.parse("Video/MP4").get().essence == "video/mp4")
    }

    @Test(
        "content types implied by file extensions, in any case",
        arguments: [
            ("m3u8", "application/x-mpegurl"), ("MPD", "application/dash+xml"), ("mp4", "video/mp4"),
            ("m4a", "audio/mp4"), ("M3U8", "application/x-mpegurl"), ("Vtt", "text/vtt"),
            ("isml", "application/vnd.ms-sstr+xml"),
            ("mkv", "video/x-matroska"), ("vtt", "text/vtt"), ("srt", "application/x-subrip"), ("webp", "image/webp"),
            // The Kelvin sign lower-cases to an ASCII k: as `lowercased()` reads it.
            ("m\u{212A}v", "video/x-matroska"),
        ])
    func extensions(ext: String, type: String) {
        #expect(CastMediaTypes.contentType(forExtension: ext) == type)
    }

    @Test("an unknown extension implies nothing")
    func unknownExtension() {
        #expect(CastMediaTypes.contentType(forExtension: "exe") == nil)
        #expect(CastMediaTypes.contentType(forExtension: "") == nil)
        #expect(CastMediaTypes.contentType(forExtension: "m3u8extended") == nil)
        #expect(CastMediaTypes.contentType(forExtension: "mp4\u{0}") == nil)
    }
}

@Suite("LanguageTag")
struct LanguageTagTests {
    @Test(
        "well-formed BCP 47 tags",
        arguments: [
            "en", "EN", "en-US", "pt-BR", "zh-Hant", "zh-Hant-TW", "es-419", "sr-Latn-RS", "de-CH-1996", "fil", "und",
            "x-klingon",
            "i-klingon",
        ])
    func wellFormed(tag: String) {
        #expect(LanguageTag.check(tag) == .wellFormed)
    }

    @Test(
        "underscores are a fixable mistake",
        arguments: [("en_US", "en-US"), ("pt_BR", "pt-BR"), ("zh_Hant_TW", "zh-Hant-TW")])
    func underscores(tag: String, fixed: String) {
        #expect(LanguageTag.check(tag) == .underscore(fixed: fixed))
    }

    @Test(
        "language names are recognised, with the code when known",
        arguments: [
            ("English", "en" as String?), ("FRENCH", "fr"), ("Português", nil), ("Klingon", nil),
        ])
    func names(tag: String, suggestion: String?) {
        if tag.unicodeScalars.allSatisfy(\.isASCII) {
            #expect(LanguageTag.check(tag) == .looksLikeName(suggestion: suggestion))
        } else {
            // A name with non-ASCII letters is not even tag-shaped.
            #expect(LanguageTag.check(tag) == .malformed)
        }
    }

    @Test(
        "malformed tags",
        arguments: ["", "e", "en-", "en--US", "e1", "123", "english-US", "en-US-abcdefghi", "en_", "en US", "en-Ü"])
    func malformed(tag: String) {
        #expect(LanguageTag.check(tag) == .malformed)
    }

    @Test("a tag read by the byte fast path gets the verdict of the general rules")
    func plainShapeAgreesWithRules() {
        let parts = [
            "", "e", "en", "EN", "fil", "engl", "x", "US", "419", "Hant", "1996", "abcdefgh", "abcdefghi", "Ü", "_",
            " ",
        ]
        var plain = 0
        for first in parts {
            for second in parts {
                for tag in [first, "\(first)-\(second)", "\(first)-\(second)-\(second)", "\(first)\(second)"] {
                    let rules = LanguageTag.checkByRules(tag)
                    if LanguageTag.isPlainWellFormed(tag) {
                        plain += 1
                        #expect(rules == .wellFormed, "\(tag)")
                    }
                    #expect(LanguageTag.check(tag) == rules, "\(tag)")
                }
            }
        }
        #expect(plain > 50)
    }
}

@Suite("URL text readings")
struct URLSyntaxTests {
    @Test(
        "the extension of the last path segment, lower-cased, without query or fragment",
        arguments: [
            ("https://h/a/Movie.MP4?x=1", "mp4"), ("https://h/a/b.m3u8#t=1", "m3u8"), ("notes", nil),
            ("https://h/a.b/c", nil),
            ("https://h/.hidden", nil), ("https://h/a.", nil), ("file:///v/Été.MKV", "mkv"), ("https://h/x.ÉTÉ", "été"),
            ("https://h/a.tar.gz?v=2.1", "gz"), ("", nil), ("https://h/a/b?x=c.mp4", nil),
        ] as [(String, String?)])
    func pathExtension(text: String, expected: String?) {
        #expect(URLSyntax.pathExtension(of: text) == expected)
    }

    @Test(
        "a table looked up from the extension's bytes gives what it gives the extension's lower-cased text",
        arguments: [
            "https://h/a/Movie.MP4?x=1", "https://h/a/b.m3u8#t=1", "notes", "https://h/a.b/c", "https://h/.hidden",
            "https://h/a.", "file:///v/Été.MKV", "https://h/x.ÉTÉ", "https://h/a.tar.gz?v=2.1", "",
            "https://h/a/b?x=c.mp4", "https://h/v.Mpd", "https://h/t/en.SRT", "https://h/t/en.srt#x", "a.vtt",
            "https://h/a/b.webm", "https://h/ü.mp4", "https://h/a.M3u8?token=a.b",
        ])
    func extensionLookedUpFromBytes(text: String) {
        let expectedType = URLSyntax.pathExtension(of: text).flatMap { CastMediaTypes.contentType(forExtension: $0) }
        #expect(URLSyntax.value(forPathExtensionOf: text, in: CastMediaTypes.extensionTypes) == expectedType)
        let table = CastValidator.captionFormatsToConvert
        #expect(
            URLSyntax.value(forPathExtensionOf: text, in: table)
                == URLSyntax.pathExtension(of: text).flatMap { table[$0] })
    }
}
