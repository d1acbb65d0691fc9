import TestSupport
import Testing

@testable import CastModel
@testable import JSONSupport

/// What the tree path makes of a document: its message, and how many findings parsing
/// (duplicate keys) and decoding reported; nil when the text is not JSON.
private func treeReading(_ bytes: [UInt8]) -> (message: CastMessage?, findings: [Diagnostic])? {
    guard let document = try? JSONParser().parse(bytes) else { return nil }
    var findings: [Diagnostic] = document.duplicateKeys.map {
        Diagnostic(.warning, "json.duplicate-key", "duplicate", path: $0.path)
    }
    let message = CastMessage.decode(from: document.value, diagnostics: &findings)
    return (message, findings)
}

/// Decodes `bytes` straight from the text and, when that gives a LOAD, checks that the tree path
/// gives the same LOAD and reports nothing while parsing and decoding (so `validate` prints the
/// same either way). Returns the direct LOAD.
@discardableResult
private func expectAgreement(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> LoadRequest? {
    let direct = bytes.withUnsafeBufferPointer { LoadRequest(plainJSON: $0) }
    guard let direct else { return nil }
    guard let tree = treeReading(bytes) else {
        Issue.record(
            "decoded directly, but the parser rejects: \(String(decoding: bytes, as: UTF8.self))",
            sourceLocation: sourceLocation)
        return direct
    }
    #expect(
        tree.findings.isEmpty, "decoded directly, but the tree path reports \(tree.findings.map(\.code))",
        sourceLocation: sourceLocation)
    #expect(tree.message == .load(direct), sourceLocation: sourceLocation)
    // The size handed to the validator instead of writing the request gives its findings.
    if let plain = bytes.withUnsafeBufferPointer({ LoadRequest.decodePlain($0) }) {
        #expect(
            CastValidator().validate(plain.request, at: .root, payloadSize: plain.frameCheckSize)
                == CastValidator().validate(direct), sourceLocation: sourceLocation)
    }
    return direct
}

@Suite("LOAD decoded straight from its bytes agrees with the tree path")
struct DirectDecodingTests {
    /// The line `castprep load --ndjson` prints for one video of the benchmark catalog.
    static let benchLine =
        #"{"autoplay":true,"currentTime":0,"media":{"contentId":"https://media.example.com/hls/video0/master.m3u8","contentType":"application/x-mpegurl","customData":{"description":"Description of video 0, long enough to look like a real catalog entry."},"duration":60,"metadata":{"images":[{"height":270,"url":"https://media.example.com/images/480x270/video0.jpg","width":480},{"height":1200,"url":"https://media.example.com/images/780x1200/video0.jpg","width":780}],"metadataType":1,"studio":"Bench Studio","subtitle":"Bench Studio","title":"Video 0"},"streamType":"BUFFERED","tracks":[{"language":"en-US","name":"English","subtype":"CAPTIONS","trackContentId":"https://media.example.com/tracks/video0-en.vtt","trackContentType":"text/vtt","trackId":1,"type":"TEXT"}]},"type":"LOAD"}"#

    /// Documents the direct decoder takes: every one is read without the tree.
    static let plain: [String] = [
        benchLine,
        #"{"type":"LOAD"}"#,
        " \t{ \"type\" : \"LOAD\" , \"autoplay\" : false }\r",
        "\u{FEFF}{\"type\":\"LOAD\"}",
        #"{"type":"LOAD","media":{}}"#,
        #"{"type":"LOAD","media":{"contentId":"a\"b\\c\/d\u00e9\ud83c\udfac","streamType":"LIVE","duration":-1}}"#,
        #"{"type":"LOAD","media":{"contentId":"Français 日本","metadata":{"metadataType":0,"title":"Été"}}}"#,
        #"{"type":"LOAD","requestId":3.0,"currentTime":1e2,"playbackRate":1.25,"activeTrackIds":[1,2e0,-3]}"#,
        #"{"type":"LOAD","activeTrackIds":[],"sessionId":"s","credentials":"c","credentialsType":"web"}"#,
        #"{"type":"LOAD","customData":{"a":[1,{"b":null}],"c":null},"loadOptions":{"x":"y"}}"#,
        #"{"type":"LOAD","customData":[],"loadOptions":0}"#,
        #"{"type":"LOAD","media":{"tracks":[],"metadata":{"metadataType":3,"images":[]}}}"#,
        #"{"type":"LOAD","media":{"tracks":[{},{"trackId":2,"roles":["main"],"customData":{}}]}}"#,
        #"{"type":"LOAD","media":{"entity":"e","hlsSegmentFormat":"aac","hlsVideoSegmentFormat":"fmp4","mediaCategory":"AUDIO","startAbsoluteTime":1.5,"contentUrl":"u","contentType":"video/mp4"}}"#,
        #"{"type":"LOAD","media":{"metadata":{"metadataType":4,"latitude":1.5,"longitude":-2,"width":3,"height":4,"location":"l","creationDateTime":"d"}}}"#,
        #"{"type":"LOAD","media":{"metadata":{"metadataType":2,"seriesTitle":"s","season":1,"episode":2,"originalAirdate":"o","episodeNumber":3,"episodeTitle":"t","seasonNumber":4}}}"#,
        #"{"type":"LOAD","media":{"metadata":{"metadataType":3,"artist":"a","albumName":"b","albumArtist":"c","composer":"d","trackNumber":1,"discNumber":2,"artistName":"e","songName":"f","releaseYear":1999}}}"#,
        #"{"type":"LOAD","media":{"metadata":{"metadataType":5,"bookTitle":"b","chapterNumber":1,"chapterTitle":"c","contentRating":"r","releaseDate":"2010"}}}"#,
        #"{"type":"LOAD","media":{"textTrackStyle":{}}}"#,
        ##"{"type":"LOAD","media":{"contentId":"v.mp4","textTrackStyle":{"foregroundColor":"#FFFF00FF","backgroundColor":"#00000080","edgeColor":"#000000FF","windowColor":"#00000000","edgeType":"DROP_SHADOW","fontScale":1.25,"fontFamily":"Droid Sans","fontGenericFamily":"SANS_SERIF","fontStyle":"BOLD","windowType":"ROUNDED_CORNERS","windowRoundedCornerRadius":8,"customData":{"k":[1,"v"]}}}}"##,
        // A vocabulary word the Cast SDK does not list is kept (the checks report it, not decoding).
        #"{"type":"LOAD","media":{"textTrackStyle":{"edgeType":"GLOW","fontScale":2e0}}}"#,
        // Findings of the checks do not stop the direct path: only decoding findings do.
        #"{"type":"LOAD","media":{"contentId":"video0/master.m3u8","contentType":"text/html","streamType":"BUFFERED","tracks":[{"trackId":1,"type":"TEXT","language":"English"}]}}"#,
    ]

    /// Documents left to the tree path: each one makes it report something while parsing or
    /// decoding, or is not a LOAD.
    static let unusual: [String] = [
        #"{"type":"LOAD","media":{"streamType":null}}"#,  // catt sends a null streamType
        #"{"type":"LOAD","customData":null}"#,
        #"{"type":null}"#,
        #"{"autoplay":true}"#,
        #"{"media":{"contentId":"x"}}"#,  // a bare MediaInformation is no LOAD
        #"{"type":"QUEUE_LOAD","items":[]}"#,
        #"{"type":"LAOD"}"#,
        #"{"type":"LOAD","autoplay":true,"autoplay":false}"#,
        #"{"type":"LOAD","type":"LOAD"}"#,
        #"{"type":"LOAD","customData":{"a":1,"a":2}}"#,
        #"{"type":"LOAD","extra":1}"#,
        #"{"type":"LOAD","media":{"contentID":"x"}}"#,
        #"{"type":"LOAD","media":{"duration":"60"}}"#,
        #"{"type":"LOAD","media":{"tracks":[{"trackId":1.5}]}}"#,
        #"{"type":"LOAD","media":{"tracks":{}}}"#,
        #"{"type":"LOAD","media":{"tracks":[1]}}"#,
        #"{"type":"LOAD","media":{"metadata":{"title":"no type"}}}"#,
        #"{"type":"LOAD","media":{"metadata":{"metadataType":1,"images":[{"width":1}]}}}"#,
        #"{"type":"LOAD","media":{"textTrackStyle":{"fontScale":"1"}}}"#,
        #"{"type":"LOAD","media":{"textTrackStyle":{"edgeType":"NONE","edgeType":"NONE"}}}"#,
        #"{"type":"LOAD","media":{"textTrackStyle":{"fontFamily":null}}}"#,
        ##"{"type":"LOAD","media":{"textTrackStyle":{"foregroundColor":"#FFFFFFFF","x":1}}}"##,
        #"{"type":"LOAD","media":{"textTrackStyle":[]}}"#,
        #"{"type":"LOAD","queueData":{"startIndex":0}}"#,
        #"{"type":"LOAD","activeTrackIds":[1,"2"]}"#,
        #"{"type":"LOAD","autoplay":"true"}"#,
        #"{"\u0074ype":"LOAD"}"#,
        #"{"type":"LOAD",}"#,
        #"{"type":"LOAD","activeTrackIds":[1,]}"#,
        #"{"type":"LOAD""#,
        #"{"type":"LOAD"} x"#,
        #"{"type":"LOAD"}{"type":"LOAD"}"#,
        #"{'type':'LOAD'}"#,
        #"{"type":"LOAD","currentTime":01}"#,
        #"{"type":"LOAD","currentTime":NaN}"#,
        #"{"type":"LOAD","autoplay":True}"#,
        "{\"type\":\"LOAD\",\"media\":{\"contentId\":\"a\u{01}b\"}}",
        #"[{"type":"LOAD"}]"#,
        #"{"format":1,"messages":[{"type":"LOAD"}]}"#,
        "",
        "   ",
        "null",
        #""LOAD""#,
        "{\"type\":\"LOAD\",\"customData\":" + String(repeating: "[", count: 300) + String(repeating: "]", count: 300)
            + "}",
    ]

    @Test("plain LOADs are decoded directly, as the tree path decodes them", arguments: plain)
    func plainDocuments(text: String) {
        let direct = expectAgreement(Array(text.utf8))
        #expect(direct != nil, "not decoded directly: \(text)")
    }

    @Test("anything the tree path reports on is left to it", arguments: unusual)
    func unusualDocuments(text: String) {
        #expect(Array(text.utf8).withUnsafeBufferPointer { LoadRequest(plainJSON: $0) } == nil)
        expectAgreement(Array(text.utf8))
    }

    @Test(
        "invalid UTF-8 and stray bytes are left to the parser",
        arguments: [[0xFF], [0xC3, 0x28], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0x80]] as [[UInt8]])
    func invalidUTF8(bad: [UInt8]) {
        let inString = Array(#"{"type":"LOAD","media":{"contentId":"a"#.utf8) + bad + Array(#""}}"#.utf8)
        let inName = Array(#"{"type":"LOAD","#.utf8) + [0x22] + bad + Array(#"":1}"#.utf8)
        for bytes in [inString, inName] {
            #expect(bytes.withUnsafeBufferPointer { LoadRequest(plainJSON: $0) } == nil)
            expectAgreement(bytes)
        }
    }

    @Test(
        "LOADs around the frame limit are measured exactly where it matters",
        arguments: [1_000, 2_600, 10_000, 65_000, 65_400, 66_000, 200_000])
    func frameLimit(length: Int) throws {
        // A long free-form string, and a long run of numbers that are written longer than read.
        let padded = #"{"type":"LOAD","customData":{"pad":""# + String(repeating: "x", count: length) + #""}}"#
        let numbers =
            #"{"type":"LOAD","activeTrackIds":["# + Array(repeating: "1e14", count: length / 5).joined(separator: ",")
            + "]}"
        for text in [padded, numbers] {
            let direct = try #require(expectAgreement(Array(text.utf8)))
            let plain = try #require(Array(text.utf8).withUnsafeBufferPointer { LoadRequest.decodePlain($0) })
            var written: [UInt8] = []
            direct.writeCompactJSON(into: &written)
            #expect(plain.frameCheckSize >= written.count)
        }
    }

    @Test("one document of every size and nesting is decoded the same both ways (generated)")
    func generatedDocuments() {
        var generator = DocumentGenerator(seed: 20)
        var direct = 0
        let count = 4000
        for _ in 0..<count {
            let bytes = generator.document()
            if expectAgreement(bytes) != nil { direct += 1 }
        }
        // The generator writes mostly right types, so a good share stays on the direct path
        // and the rest exercises the fall-backs.
        #expect(direct > count / 10)
        #expect(direct < count * 9 / 10)
    }
}

/// LOAD-like documents: members of LOAD, MediaInformation, metadata, tracks and images, each
/// usually of its right type and sometimes of another, null, repeated or unknown, written
/// compactly or pretty and sometimes with a few bytes changed.
struct DocumentGenerator {
    private var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(state: seed) }

    private mutating func below(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }

    private mutating func chance(_ percent: Int) -> Bool { below(100) < percent }

    private enum Kind { case string, int, double, bool, free, media, metadata, tracks, images, ints, strings }

    private static let load: [(String, Kind)] = [
        ("requestId", .int), ("sessionId", .string), ("media", .media), ("autoplay", .bool), ("currentTime", .double),
        ("activeTrackIds", .ints), ("playbackRate", .double), ("credentials", .string), ("credentialsType", .string),
        ("loadOptions", .free), ("customData", .free),
    ]
    private static let media: [(String, Kind)] = [
        ("contentId", .string), ("contentUrl", .string), ("contentType", .string), ("streamType", .string),
        ("duration", .double), ("metadata", .metadata), ("tracks", .tracks), ("customData", .free),
        ("entity", .string), ("hlsSegmentFormat", .string), ("mediaCategory", .string),
        ("startAbsoluteTime", .double),
    ]
    private static let metadata: [(String, Kind)] = [
        ("title", .string), ("subtitle", .string), ("images", .images), ("studio", .string), ("season", .int),
        ("latitude", .double), ("releaseYear", .int), ("artist", .string),
    ]
    private static let track: [(String, Kind)] = [
        ("trackId", .int), ("type", .string), ("trackContentId", .string), ("subtype", .string),
        ("language", .string), ("roles", .strings), ("customData", .free),
    ]
    private static let image: [(String, Kind)] = [("width", .int), ("height", .int)]

    private static let strings: [String] = [
        "", "https://media.example.com/a.mp4", "en-US", "BUFFERED", "é \"quoted\" \\ /", "日本", "TEXT", "LOAD",
    ]
    private static let numbers = ["0", "1", "-1", "3.0", "1.5", "1e2", "-0", "12345678901234567890", "2E-3"]

    private mutating func scalar() -> JSONValue {
        switch below(6) {
        case 0: .string(Self.strings[below(Self.strings.count)])
        case 1: .number(JSONNumber(validatedLiteral: Self.numbers[below(Self.numbers.count)]))
        case 2: .bool(chance(50))
        case 3: .null
        case 4: .array(chance(50) ? [] : [.number(JSONNumber(1))])
        default: .object(chance(50) ? [:] : ["k": .string("v")])
        }
    }

    private mutating func value(_ kind: Kind, depth: Int) -> JSONValue {
        // Mostly the right type; sometimes anything.
        if chance(8) { return scalar() }
        switch kind {
        case .string: return .string(Self.strings[below(Self.strings.count)])
        case .int: return .number(JSONNumber(validatedLiteral: ["0", "1", "7", "3.0", "-2", "1e1"][below(6)]))
        case .double: return .number(JSONNumber(validatedLiteral: Self.numbers[below(Self.numbers.count)]))
        case .bool: return .bool(chance(50))
        case .free: return depth > 0 ? object(Self.image, depth: depth - 1, required: []) : scalar()
        case .media: return object(Self.media, depth: depth, required: [])
        case .metadata:
            return object(Self.metadata, depth: depth, required: chance(90) ? [("metadataType", .int)] : [])
        case .tracks: return .array((0..<below(3)).map { _ in object(Self.track, depth: depth, required: []) })
        case .images:
            return .array(
                (0..<below(3)).map { _ in
                    object(Self.image, depth: depth, required: chance(90) ? [("url", .string)] : [])
                })
        case .ints: return .array((0..<below(3)).map { _ in value(.int, depth: depth) })
        case .strings: return .array((0..<below(3)).map { _ in value(.string, depth: depth) })
        }
    }

    private mutating func object(_ members: [(String, Kind)], depth: Int, required: [(String, Kind)])
        -> JSONValue
    {
        var object: [String: JSONValue] = [:]
        for (name, kind) in required { object[name] = value(kind, depth: depth) }
        for (name, kind) in members where chance(40) { object[name] = value(kind, depth: depth) }
        if chance(3) { object["unknownMember"] = scalar() }
        if chance(3) { object["contentID"] = scalar() }
        return .object(object)
    }

    /// One document's bytes.
    mutating func document() -> [UInt8] {
        guard case .object(var members) = object(Self.load, depth: 2, required: []) else { return [] }
        if !chance(5) { members["type"] = chance(95) ? .string("LOAD") : scalar() }
        let writer = chance(80) ? JSONWriter.compact : JSONWriter.pretty
        var bytes = writer.bytes(from: .object(members))
        if chance(4), bytes.count > 2 {
            // A repeated member: the first one again, right after the opening brace.
            if let colon = bytes.firstIndex(of: UInt8(ascii: ":")), let end = bytes.firstIndex(of: UInt8(ascii: ",")),
                colon < end
            {
                bytes.insert(contentsOf: bytes[1...end], at: 1)
            }
        }
        if chance(20), !bytes.isEmpty {
            let stray: [UInt8] = [
                0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x6E, 0x30, 0x2D, 0x2E, 0x65, 0x20, 0x0A, 0x80, 0xFF,
            ]
            for _ in 0...below(2) {
                let at = below(bytes.count)
                switch below(3) {
                case 0: bytes[at] = stray[below(stray.count)]
                case 1: bytes.remove(at: at)
                default: bytes.insert(stray[below(stray.count)], at: at)
                }
                if bytes.isEmpty { break }
            }
        }
        return bytes
    }
}
