import CastModel
import Foundation
import HTTPCheck
import Testing
import TestSupport

/// The manifests in Tests/HostileInputs, which once trapped the walkers (`segments[0]` on an
/// empty playlist, `Int` overflow on byte ranges, segment numbers and times, `Int(Double)` on
/// a 60-digit duration).
@Suite("Hostile manifests become problems, not traps")
struct HostileManifestTests {
    static let folder = Repository.root().appendingPathComponent("Tests/HostileInputs")
    let base = WebURL("https://cdn.example/live/index.m3u8")!

    func text(_ name: String) throws -> String {
        try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
    }

    @Test(
        "HLS: overflowing byte ranges and absurd EXTINF values are refused on their line; the rest is kept",
        arguments: [
            ("byterange-overflow.m3u8", 9, [33, 36, 39]),  // the running offset passes 2^63 at the tenth range
            ("extinf-1e15.m3u8", 0, [4]),
        ])
    func hlsValues(name: String, kept: Int, lines: [Int]) throws {
        let playlist = try #require(HLSReferences.parse(try text(name)))
        #expect(playlist.segments.count == kept)
        #expect(playlist.problems.map(\.code) == lines.map { _ in HTTPCheckCode.manifestValueOutOfRange })
        #expect(playlist.problems.map(\.line) == lines)
        // Every range that was kept is a real range.
        for segment in playlist.segments {
            guard case .closed(let first, let last)? = segment.byteRange else { continue }
            #expect(first <= last)
        }
    }

    @Test("HLS: EXTINF values a player can hold are accepted", arguments: ["0", "6", "6.006", "86400"])
    func saneDurations(value: String) throws {
        let playlist = try #require(HLSReferences.parse("#EXTM3U\n#EXTINF:\(value),\nseg.ts\n#EXT-X-ENDLIST\n"))
        #expect(playlist.problems.isEmpty)
        #expect(playlist.segments.count == 1)
    }

    @Test("HLS: EXTINF values no player can hold are refused", arguments: ["1e15", "-1", "86401", "inf", "nan"])
    func absurdDurations(value: String) throws {
        let playlist = try #require(HLSReferences.parse("#EXTM3U\n#EXTINF:\(value),\nseg.ts\nnext.ts\n"))
        #expect(playlist.problems.map(\.code) == [HTTPCheckCode.manifestValueOutOfRange])
        #expect(playlist.segments.map(\.uri) == ["next.ts"], "the refused segment is not fetched")
    }

    @Test("HLS: a line of megabytes is refused with its segment, the segments around it are kept")
    func longLine() throws {
        let long = String(repeating: "a", count: HLSReferences.maximumLineBytes + 1)
        let text =
            "#EXTM3U\n#EXTINF:4,\nfirst.ts\n#EXTINF:4,title=\"\(long)\"\nhuge.ts\n#EXTINF:4,\n\(long).ts\n#EXTINF:4,\nlast.ts\n"
        let playlist = try #require(HLSReferences.parse(text))
        #expect(playlist.segments.map(\.uri) == ["first.ts", "last.ts"])
        #expect(
            playlist.problems.map(\.code) == [HTTPCheckCode.manifestLineTooLong, HTTPCheckCode.manifestLineTooLong])
        #expect(playlist.problems.map(\.line) == [4, 7])
    }

    @Test("HLS: an empty live playlist has no segments and no problems; the walker knows it is live")
    func emptyLive() throws {
        let playlist = try #require(HLSReferences.parse(try text("empty-live.m3u8")))
        #expect(playlist.segments.isEmpty)
        #expect(playlist.problems.isEmpty)
        #expect(!playlist.hasEndList)
        #expect(!playlist.isMaster)
    }

    @Test(
        "DASH: overflowing SegmentTimeline, startNumber, timescale and a 60-digit duration are out of range",
        arguments: [
            "timeline-overflow.mpd", "startnumber-overflow.mpd", "timescale-overflow.mpd", "duration-60-digits.mpd",
        ], [false, true])
    func dashValues(name: String, allSegments: Bool) throws {
        let manifest = try DASHReferences.parse(Array(try text(name).utf8), url: base, allSegments: allSegments)
        #expect(manifest.outOfRange.count == 1)
        #expect(manifest.references.contains { $0.role == .initSegment }, "the init segment is still listed")
    }

    @Test("DASH: ten million repeats with every segment wanted stop at the per-representation limit, quickly")
    func manyRepeats() throws {
        let text = """
            <MPD type="static" mediaPresentationDuration="PT10S"><Period><AdaptationSet mimeType="video/mp4">
            <SegmentTemplate timescale="1" media="$Number$.m4s"><SegmentTimeline>
            <S t="0" d="1" r="10000000"/><S d="1" r="10000000"/><S d="1" r="10000000"/>
            </SegmentTimeline></SegmentTemplate><Representation id="v" bandwidth="1"/></AdaptationSet></Period></MPD>
            """
        let start = threadCPUTime()  // the parse runs on this thread: its cost whatever the load
        let manifest = try DASHReferences.parse(Array(text.utf8), url: base, allSegments: true)
        #expect(manifest.references.count == DASHReferences.maximumSegmentsPerRepresentation)
        #expect(manifest.outOfRange.isEmpty)
        #expect(threadCPUTime() - start < .seconds(5))
    }
}
