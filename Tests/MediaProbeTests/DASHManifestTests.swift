import CastModel
import MediaProbe
import StreamingFormats
import TestSupport
import Testing

@Suite("DASH manifests")
struct DASHManifestTests {
    @Test("the sample MPD: VOD, duration, video and audio representations")
    func sample() throws {
        let probe = try MediaProber().probeBlocking(path: samplePath("dash/manifest.mpd"))
        let dash = try #require(probe.dash)
        #expect(!dash.isLive)
        #expect(dash.adaptationSets.count == 2)
        #expect(dash.codecs == ["avc1.640028", "mp4a.40.2"])
        #expect(probe.videoStreams.first?.width == 320)
        #expect(probe.streamType == "BUFFERED")
        #expect(dash.adaptationSets.first?.representations.first?.media == "chunk-$RepresentationID$-$Number$.m4s")
    }

    @Test("live manifests, templates per representation, ISO durations")
    func parse() throws {
        let text = """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="dynamic" mediaPresentationDuration="PT1H2M3.5S">
              <Period>
                <AdaptationSet mimeType="video/mp4" codecs="hvc1.2.4.L153.B0">
                  <Representation id="4k" bandwidth="15000000" width="3840" height="2160">
                    <SegmentTemplate initialization="init-4k.mp4" media="seg-4k-$Number$.m4s"/>
                  </Representation>
                </AdaptationSet>
                <AdaptationSet mimeType="audio/mp4" lang="de"><Representation id="a" bandwidth="128000" codecs="ec-3"/></AdaptationSet>
              </Period>
            </MPD>
            """
        let manifest = try DASHManifest.parse(Array(text.utf8))
        #expect(manifest.isLive)
        #expect(manifest.duration == 3723.5)
        #expect(manifest.adaptationSets[0].representations[0].initialization == "init-4k.mp4")
        #expect(manifest.adaptationSets[1].language == "de")
        #expect(manifest.codecs == ["ec-3", "hvc1.2.4.L153.B0"])
    }

    @Test(
        "malformed, hostile and foreign XML is refused without fetching anything",
        arguments: [
            "<MPD><Period>",  // truncated
            "<notmpd/>",
            "<?xml version=\"1.0\"?><!DOCTYPE MPD [<!ENTITY x SYSTEM \"http://127.0.0.1:9/x\">]><MPD>&x;</MPD>",
            "",
        ])
    func refused(text: String) {
        do {
            let manifest = try DASHManifest.parse(Array(text.utf8))
            // The entity example parses (entities are not expanded): nothing was fetched.
            #expect(manifest.adaptationSets.isEmpty)
        } catch {
            #expect(!error.message.isEmpty)
        }
    }

    @Test("entity expansion bombs end at once with an error", arguments: ["text", "attribute", "nested"])
    func entityBombs(kind: String) throws {
        let declarations =
            kind == "nested"
            ? "<!ENTITY l0 \"lol\">"
                + (1...9).map { "<!ENTITY l\($0) \"" + String(repeating: "&l\($0 - 1);", count: 10) + "\">" }.joined()
            : "<!ENTITY big \"" + String(repeating: "A", count: 50_000) + "\">"
        let references =
            kind == "nested" ? String(repeating: "&l9;", count: 100) : String(repeating: "&big;", count: 20_000)
        let text =
            "<?xml version=\"1.0\"?><!DOCTYPE MPD [\(declarations)]>"
            + "<MPD type=\"static\" mediaPresentationDuration=\"\(kind == "attribute" ? references : "PT2S")\"><Period>"
            + "<AdaptationSet mimeType=\"video/mp4\" codecs=\"\(kind == "text" ? "" : "avc1")\"><Representation id=\"v\">"
            + "<BaseURL>\(kind == "attribute" ? "v.mp4" : references)</BaseURL></Representation></AdaptationSet></Period></MPD>"
        #expect(text.utf8.count < 200_000)
        let start = threadCPUTime()  // the parse runs on this thread: its cost whatever the load
        let error = #expect(throws: DASHManifest.ParseError.self) { try DASHManifest.parse(Array(text.utf8)) }
        #expect(error?.message.contains("entities") == true)
        #expect(threadCPUTime() - start < .seconds(1))
    }
}
