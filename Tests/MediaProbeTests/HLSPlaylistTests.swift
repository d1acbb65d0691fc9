import CastModel
@testable import MediaProbe
import StreamingFormats
import Testing

@Suite("HLS playlists")
struct HLSPlaylistTests {
    @Test("a master playlist: variants with quoted CODECS, renditions and groups")
    func master() throws {
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English, stereo",LANGUAGE="en",DEFAULT=YES,URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Français",LANGUAGE="fr",FORCED=YES,URI="subs/fr.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=2500000,AVERAGE-BANDWIDTH=2000000,RESOLUTION=1280x720,FRAME-RATE=29.970,CODECS="hvc1.1.6.L93.B0,mp4a.40.2",AUDIO="aud",SUBTITLES="subs"
            hd/index.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=100000,URI="iframes.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360
            sd/index.m3u8
            """
        guard case .master(let master)? = HLSPlaylist.parse(text) else {
            Issue.record("not read as a master playlist")
            return
        }
        #expect(master.variants.map(\.uri) == ["hd/index.m3u8", "sd/index.m3u8"])
        #expect(master.variants[0].codecs == ["hvc1.1.6.L93.B0", "mp4a.40.2"])
        #expect(master.variants[0].width == 1280)
        #expect(master.variants[0].frameRate == 29.97)
        #expect(master.variants[0].audioGroup == "aud")
        #expect(master.renditions.map(\.name) == ["English, stereo", "Français"])
        #expect(master.renditions[1].isForced)
        #expect(master.renditions[0].isDefault)
    }

    @Test(
        "media playlists: packaging, keys, live versus VOD",
        arguments: [
            ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6.0,\nseg0.ts\n#EXT-X-ENDLIST\n", HLSPackaging.ts, false),
            ("#EXTM3U\n#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:4,\nseg0.m4s\n#EXT-X-ENDLIST\n", .fmp4, false),
            ("#EXTM3U\n#EXTINF:4,\naudio0.aac?token=1\n", .aac, true),
            ("#EXTM3U\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXTINF:4,\nx.mp3\n", .mp3, false),
        ])
    func media(text: String, packaging: HLSPackaging, isLive: Bool) throws {
        guard case .media(let playlist)? = HLSPlaylist.parse(text) else {
            Issue.record("not read as a media playlist")
            return
        }
        #expect(playlist.segmentPackaging == packaging)
        #expect(playlist.isLive == isLive)
    }

    @Test("keys and durations; text without #EXTM3U is not a playlist")
    func keysAndGarbage() {
        let text =
            "#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI=\"https://keys.example/k1\"\n#EXTINF:2.5,\na.ts\n#EXTINF:2.5,\nb.ts\n"
        if case .media(let playlist)? = HLSPlaylist.parse(text) {
            #expect(playlist.keys == ["https://keys.example/k1"])
            #expect(playlist.duration == 5)
        } else {
            Issue.record("not read as a media playlist")
        }
        #expect(HLSPlaylist.parse("hello") == nil)
        #expect(HLSPlaylist.parse("") == nil)
    }

    @Test("the sample HLS streams report the LOAD segment formats")
    func samples() throws {
        let ts = try #require(try MediaProber().probeBlocking(path: samplePath("hls-ts/master.m3u8")).hls)
        #expect(ts.variants.count == 2)
        #expect(ts.hlsVideoSegmentFormat == "mpeg2_ts")
        #expect(ts.hlsSegmentFormat == "ts")
        #expect(ts.renditions.first?.type == "SUBTITLES")
        let fmp4 = try #require(try MediaProber().probeBlocking(path: samplePath("hls-fmp4/index.m3u8")).hls)
        #expect(fmp4.hlsVideoSegmentFormat == "fmp4")
        #expect(fmp4.hlsSegmentFormat == "fmp4")
        #expect(!fmp4.isLive)
    }

    @Test("HEVC in TS segments will not play, with the repackaging fix")
    func hevcInTS() throws {
        var probe = try MediaProber().probeBlocking(path: samplePath("hls-ts/master.m3u8"))
        probe.source = "master.m3u8"
        var hls = try #require(probe.hls)
        hls.variants[0].codecs = ["hvc1.1.6.L93.B0", "mp4a.40.2"]
        probe.hls = hls
        let verdict = DeviceJudge().verdict(
            for: probe, on: try #require(DeviceProfile.all.first { $0.id == "chromecast-ultra" }))
        #expect(verdict.outcome == .willNotPlay)
        #expect(verdict.reasons.contains { $0.code == "device.hevc-in-ts" })
        // One ffmpeg command cannot repackage a ladder (FixCommandTests runs the variant's command).
        #expect(verdict.fix?.hasPrefix("repackage every variant playlist with fMP4 segments") == true)
        #expect(verdict.fixArguments == nil)
    }
}

@Suite("Playlist references")
struct PlaylistReferenceTests {
    @Test(
        "references resolve against the playlist's path or URL",
        arguments: [
            ("v0/index.m3u8", "Samples/hls/master.m3u8", "Samples/hls/v0/index.m3u8"),
            ("v0/index.m3u8", "http://h.example:8080/a/master.m3u8?token=1", "http://h.example:8080/a/v0/index.m3u8"),
            ("/abs/index.m3u8", "https://h.example/a/master.m3u8", "https://h.example/abs/index.m3u8"),
            ("https://cdn.example/x.m3u8", "https://h.example/a/master.m3u8", "https://cdn.example/x.m3u8"),
        ])
    func resolve(reference: String, base: String, expected: String) {
        #expect(MediaProber.resolveReference(reference, against: base) == expected)
    }
}
