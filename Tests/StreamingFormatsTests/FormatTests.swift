import Foundation
import StreamingFormats
import Testing
import TestSupport

/// The manifests in Tests/HostileInputs, read as text.
enum HostileInputs {
    static let folder = Repository.root().appendingPathComponent("Tests/HostileInputs")

    static func text(_ name: String) throws -> String {
        try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
    }
}

@Suite("ISO 8601 durations")
struct ISO8601DurationTests {
    @Test(
        "days, hours, minutes and seconds",
        arguments: [
            ("PT1M2.5S", 62.5), ("PT2H", 7200.0), ("P1DT1S", 86401.0), ("PT0.25S", 0.25), (" PT10S\t", 10.0),
            ("PT0S", 0.0), ("P2D", 172_800.0),
        ])
    func durations(text: String, seconds: Double) {
        #expect(ISO8601Duration.seconds(text) == seconds)
    }

    @Test(
        "malformed durations, calendar units and text past the length limit give nothing",
        arguments: [
            "1M", "PTXS", "PT", "P", "P1X", "P1Y", "P1M", "P1W", "PT1D", "P1H", "PT1.5.5S", "PT1HT2M", "PT5", "P1DT",
            "",
            "PT" + String(repeating: "1", count: 61) + "S",  // 64 characters
        ])
    func malformed(text: String) {
        #expect(ISO8601Duration.seconds(text) == nil)
    }

    @Test("a 60-digit duration is read, so that a caller can name it, and is past the longest presentation")
    func absurd() {
        let value = ISO8601Duration.seconds("PT" + String(repeating: "1", count: 60) + "S")
        #expect(value.map { $0 > ISO8601Duration.maximumPresentationSeconds } == true)
    }
}

@Suite("Checked arithmetic on manifest numbers")
struct ArithmeticOverflowTests {
    @Test("sums, differences and products that fit")
    func fits() throws {
        #expect(try ArithmeticOverflow.add(Int.max - 1, 1, "a") == Int.max)
        #expect(try ArithmeticOverflow.subtract(Int.min + 1, 1, "a") == Int.min)
        #expect(try ArithmeticOverflow.multiplyAdd(10, 3, 4, "a") == 22)
    }

    /// One computation that overflows.
    enum Overflowing: CaseIterable, Sendable {
        case sum, difference, product, productPlusBase

        func compute() throws(ArithmeticOverflow) -> Int {
            switch self {
            case .sum: try ArithmeticOverflow.add(Int.max, 1, "n + 1")
            case .difference: try ArithmeticOverflow.subtract(Int.min, 1, "n + 1")
            case .product: try ArithmeticOverflow.multiplyAdd(0, Int.max, 2, "n + 1")
            case .productPlusBase: try ArithmeticOverflow.multiplyAdd(Int.max, 1, 1, "n + 1")
            }
        }
    }

    @Test("overflows throw with the computation", arguments: Overflowing.allCases)
    func overflows(computation: Overflowing) {
        #expect(throws: ArithmeticOverflow("n + 1 is past 64 bits")) { try computation.compute() }
    }
}

@Suite("The hardened MPD loader")
struct MPDDocumentTests {
    @Test("elements, attributes, text and children")
    func reads() throws {
        let text =
            #"<MPD type="static"><BaseURL> https://cdn.example/ </BaseURL><Period id="a"/><Period id="b"/><!-- c --></MPD>"#
        let root = try MPDDocument(Array(text.utf8)).root
        #expect(root.name == "MPD")
        #expect(root.attribute("type") == "static")
        #expect(root.attribute("missing") == nil)
        #expect(root.firstChild(named: "BaseURL")?.text == "https://cdn.example/")
        #expect(root.children(named: "Period").map { $0.attribute("id") } == ["a", "b"])
        #expect(root.firstChild(named: "AdaptationSet") == nil)
    }

    @Test(
        "refused documents",
        arguments: [
            ("<MPD>", "the manifest is not well-formed XML"),
            ("<html/>", "the root element is not <MPD>"),
            (#"<!DOCTYPE MPD [<!ENTITY a "aaaa">]><MPD a="&a;"/>"#, "the manifest declares XML entities"),
            (
                #"<!DOCTYPE MPD [<!ENTITY x SYSTEM "https://attacker.example/x">]><MPD>&x;</MPD>"#,
                "the manifest declares XML entities"
            ),
        ])
    func refused(text: String, message: String) {
        let error = #expect(throws: MPDReadError.self) { try MPDDocument(Array(text.utf8)) }
        #expect(error?.message.hasPrefix(message) == true)
    }

    @Test("a manifest past the size limit is refused before it is parsed")
    func tooLarge() {
        let error = #expect(throws: MPDReadError.self) {
            try MPDDocument([UInt8](repeating: 0x20, count: MPDDocument.maximumBytes + 1))
        }
        #expect(
            error?.message
                == "the manifest is \(MPDDocument.maximumBytes + 1) bytes; the limit is \(MPDDocument.maximumBytes)")
    }
}

@Suite("DASH manifests and templates")
struct DASHManifestModelTests {
    @Test(
        "hostile manifests read without trapping; absurd durations count as unknown",
        arguments: [
            ("timeline-overflow.mpd", 10.0 as Double?), ("startnumber-overflow.mpd", 10),
            ("timescale-overflow.mpd", 10),
            ("duration-60-digits.mpd", nil),
        ])
    func hostile(name: String, duration: Double?) throws {
        let manifest = try DASHManifest.parse(Array(try HostileInputs.text(name).utf8))
        #expect(manifest.duration == duration)
        #expect(manifest.codecs == ["avc1.64001f"])
        #expect(!manifest.isLive)
    }

    @Test(
        "template identifiers",
        arguments: [
            ("v-$RepresentationID$-$Number%05d$.m4s", "v-hd-00042.m4s" as String?), ("$Time$.m4s", "9000.m4s"),
            ("$$$Bandwidth$", "$800"),
            ("$Unknown$", nil), ("$Number", nil), ("$Number%099d$", nil), ("$Number%5x$", nil),
            (String(repeating: "a", count: DASHTemplate.maximumTemplateBytes + 1), nil),
        ])
    func expand(template: String, expected: String?) {
        #expect(DASHTemplate.expand(template, id: "hd", bandwidth: "800", number: 42, time: 9000) == expected)
    }
}

@Suite("HLS playlists")
struct HLSPlaylistModelTests {
    @Test(
        "hostile playlists: durations stay finite, absurd ones are counted",
        arguments: [
            ("extinf-1e15.m3u8", 1), ("byterange-overflow.m3u8", 0), ("empty-live.m3u8", 0),
        ])
    func hostile(name: String, outOfRange: Int) throws {
        guard case .media(let playlist)? = HLSPlaylist.parse(try HostileInputs.text(name)) else {
            Issue.record("\(name) is not read as a media playlist")
            return
        }
        #expect(playlist.duration.isFinite)
        #expect(playlist.outOfRangeDurations == outOfRange)
    }

    @Test(
        "a master playlist is recognised by its variants or renditions",
        arguments: [
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n", "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,URI=\"a.m3u8\"\n",
        ])
    func master(text: String) {
        guard case .master? = HLSPlaylist.parse(text) else {
            Issue.record("not read as a master playlist")
            return
        }
    }
}

@Suite("MP4 boxes")
struct MP4BoxesTests {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = UInt32(8 + payload.count)
        return [UInt8(size >> 24), UInt8(size >> 16 & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size & 0xFF)]
            + Array(type.utf8) + payload
    }

    /// A version-0 mvhd: timescale 1000, duration 2500.
    static let mvhd = box(
        "mvhd", [0, 0, 0, 0] + [UInt8](repeating: 0, count: 8) + [0, 0, 0x03, 0xE8] + [0, 0, 0x09, 0xC4])

    @Test("the movie duration comes from moov/mvhd when moov is in the bytes")
    func movieDuration() {
        let file = Self.box("ftyp", Array("isom".utf8)) + Self.box("moov", Self.mvhd) + Self.box("mdat", [1, 2, 3])
        #expect(MP4Boxes.movieDuration(file) == 2.5)
        #expect(MP4Boxes.looksLikeMP4(file))
        #expect(MP4Boxes.movieDuration(Array(file.prefix(20))) == nil)
        #expect(!MP4Boxes.looksLikeMP4(Array("<html>".utf8)))
    }

    @Test(
        "hostile headers end the walk instead of trapping",
        arguments: [
            [0xFF, 0xFF, 0xFF, 0xFF] + Array("moov".utf8),  // past the bytes given
            // 64-bit size near Int.max
            [0, 0, 0, 1] + Array("moov".utf8) + [0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
            [0, 0, 0, 1] + Array("moov".utf8) + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],  // past Int.max
            [0, 0, 0, 4] + Array("moov".utf8),  // smaller than its header
            [0, 0, 0, 1] + Array("moov".utf8),  // a 64-bit size that is cut off
            [],
        ] as [[UInt8]])
    func hostile(bytes: [UInt8]) {
        #expect(MP4Boxes.movieDuration(bytes) == nil)
        let types = MP4Boxes.topLevelTypes(fileSize: Int.max) { offset in
            offset == 0 ? bytes : Self.box("mdat", [])
        }
        #expect(types.count <= MP4Boxes.maximumTopLevelBoxes)
    }

    @Test("top-level layout and fast start")
    func layout() {
        let file = Self.box("ftyp", []) + Self.box("mdat", [0, 0]) + Self.box("moov", Self.mvhd)
        let types = MP4Boxes.topLevelTypes(fileSize: file.count) { Array(file[$0..<min(file.count, $0 + 16)]) }
        #expect(types == ["ftyp", "mdat", "moov"])
        #expect(MP4Boxes.isFastStart(types) == false)
    }
}
