import Foundation
import HTTPCheck
import StreamingFormats
import Testing
import TestSupport

@Suite("URL resolution (RFC 3986 §5.4)")
struct WebURLTests {
    // The RFC's own normal examples, against its base http://a/b/c/d;p?q.
    @Test(arguments: [
        ("g", "http://a/b/c/g"), ("./g", "http://a/b/c/g"), ("g/", "http://a/b/c/g/"), ("/g", "http://a/g"),
        ("//g", "http://g/"),
        ("?y", "http://a/b/c/d;p?y"), ("g?y", "http://a/b/c/g?y"), ("#s", "http://a/b/c/d;p?q"),
        ("g#s", "http://a/b/c/g"),
        (";x", "http://a/b/c/;x"), ("g;x", "http://a/b/c/g;x"), ("", "http://a/b/c/d;p?q"), (".", "http://a/b/c/"),
        ("./", "http://a/b/c/"),
        ("..", "http://a/b/"), ("../", "http://a/b/"), ("../g", "http://a/b/g"), ("../..", "http://a/"),
        ("../../g", "http://a/g"),
        ("../../../g", "http://a/g"), ("/./g", "http://a/g"), ("g.", "http://a/b/c/g."), ("g..", "http://a/b/c/g.."),
        ("./../g", "http://a/b/g"), ("g/../h", "http://a/b/c/h"),
        ("https://cdn.example:443/x", "https://cdn.example/x"),
    ])
    func resolvesLikeTheRFC(reference: String, expected: String) throws {
        let base = try #require(WebURL("http://a/b/c/d;p?q"))
        #expect(base.resolving(reference)?.description == expected)
    }

    @Test("manifest text is cleaned the way a browser does: spaces encoded, backslashes are slashes")
    func cleaning() throws {
        let base = try #require(WebURL("http://h:8080/dir/master.m3u8"))
        #expect(base.resolving("my segment 1.ts")?.description == "http://h:8080/dir/my%20segment%201.ts")
        #expect(base.resolving("sub\\a.ts")?.description == "http://h:8080/dir/sub/a.ts")
        #expect(base.origin == "http://h:8080")
        #expect(WebURL("HTTP://Example.COM:80/A")?.description == "http://example.com/A")
        #expect(WebURL("http://[::1]:9/x")?.hostAndPort == "[::1]:9")
        #expect(WebURL("http://user:pw@host/x")?.description == "http://host/x")
    }

    @Test(
        "what is not an http(s) URL is refused",
        arguments: [
            "ftp://h/x", "data:text/plain,hi", "skd://key", "relative/path", "http://", "http://h:99999/",
            "http://h:0/", "http://[::1/x",
            "http://ho st/", "http://h:8x/",
        ])
    func refuses(text: String) {
        #expect(WebURL(text) == nil)
    }

    @Test(
        "dot segments are removed wherever they are, and only whole segments count",
        arguments: [
            ("http://h/a/./b", "/a/b"), ("http://h/a/../b", "/b"), ("http://h/a/..", "/"), ("http://h/a/.", "/a/"),
            ("http://h/./", "/"),
            ("http://h/a/.../b", "/a/.../b"), ("http://h/a/.b/c.", "/a/.b/c."), ("http://h/..a/b..", "/..a/b.."),
            ("http://h", "/"),
            ("http://h/a/%2E%2E/b", "/a/%2E%2E/b"),
        ])
    func dotSegments(text: String, path: String) {
        #expect(WebURL(text)?.path == path)
    }

    @Test(
        "hosts and ports are read from bytes: case, brackets, credentials, defaults",
        arguments: [
            ("http://Example.COM:8080/x", "example.com", 8080), ("https://h:443/", "h", nil),
            ("http://u@[::FFFF:1.2.3.4]:81/", "[::ffff:1.2.3.4]", 81),
            ("http://a:b@h:00080/", "h", nil), ("http://h_1.example/", "h_1.example", nil),
        ])
    func authorities(text: String, host: String, port: Int?) {
        let url = WebURL(text)
        #expect(url?.host == host)
        #expect(url?.port == port)
    }

    @Test("loopback hosts are recognised")
    func loopback() {
        #expect(WebURL("http://127.0.0.1:8/")?.isLoopback == true)
        #expect(WebURL("http://localhost/")?.isLoopback == true)
        #expect(WebURL("http://[::1]/")?.isLoopback == true)
        #expect(WebURL("http://192.168.1.2/")?.isLoopback == false)
    }
}

@Suite("HTTP response heads and ranges")
struct HTTPHeadTests {
    @Test("the last head wins after an interim 100 Continue; folded lines join; names keep case, lookups ignore it")
    func heads() throws {
        let text =
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1/10\r\nX-Long: a\r\n  b\r\n"
            + "access-control-allow-origin: *\r\nAccess-Control-Allow-Origin: https://x\r\n\r\n"
        let head = try #require(HTTPResponseHead.parse(Array(text.utf8)))
        #expect(head.status == 206)
        #expect(head.reason == "Partial Content")
        #expect(head.headers["content-range"] == "bytes 0-1/10")
        #expect(head.headers["x-long"] == "a b")
        #expect(head.headers.values("Access-Control-Allow-Origin") == ["*", "https://x"])
    }

    @Test("garbage is not a head, and a head never holds more than the field limit")
    func bounded() {
        #expect(HTTPResponseHead.parse(Array("garbage\r\n\r\n".utf8)) == nil)
        #expect(HTTPResponseHead.parse(Array("HTTP/1.1 abc OK\r\n".utf8)) == nil)
        let many = "HTTP/2 200\r\n" + String(repeating: "X-A: b\r\n", count: 5000)
        #expect(HTTPResponseHead.parse(Array(many.utf8))?.headers.fields.count == HTTPResponseHead.maximumFields)
    }

    @Test("list elements are split, trimmed and lower-cased")
    func lists() {
        let headers = HTTPHeaders([
            HTTPHeader("Access-Control-Allow-Headers", "Range, content-type,,"),
            HTTPHeader("access-control-allow-headers", " Accept-Encoding "),
        ])
        #expect(headers.listElements("ACCESS-CONTROL-ALLOW-HEADERS") == ["range", "content-type", "accept-encoding"])
    }

    @Test(
        "Content-Range forms",
        arguments: [
            ("bytes 0-1/10", 0, 1, 10), ("bytes */10", nil, nil, 10), ("bytes 5-9/*", 5, 9, nil),
            ("BYTES 0-0/1", 0, 0, 1),
        ] as [(String, Int?, Int?, Int?)])
    func contentRange(text: String, first: Int?, last: Int?, length: Int?) throws {
        let range = try #require(ContentRange.parse(text))
        #expect(range.first == first)
        #expect(range.last == last)
        #expect(range.completeLength == length)
    }

    @Test(
        "malformed Content-Range values are refused",
        arguments: [
            "bytes 5-1/10", "bytes 0-10/10", "bytes */*", "items 0-1/2", "bytes 0-1", "bytes -1-2/3",
            "bytes 99999999999999999999-1/2",
        ])
    func badContentRange(text: String) {
        #expect(ContentRange.parse(text) == nil)
    }

    @Test("the bytes a correct server sends for each range form")
    func spans() {
        #expect(ByteRangeRequest.open(0).expectedSpan(length: 10)! == (0, 9))
        #expect(ByteRangeRequest.suffix(2).expectedSpan(length: 10)! == (8, 9))
        #expect(ByteRangeRequest.closed(5, 100).expectedSpan(length: 10)! == (5, 9))
        #expect(ByteRangeRequest.open(10).expectedSpan(length: 10) == nil)
        #expect(ByteRangeRequest.suffix(2).description == "bytes=-2")
    }
}

@Suite("HLS references")
struct HLSReferencesTests {
    @Test("a master playlist lists variants and renditions with their lines; I-frame playlists are not fetched")
    func master() throws {
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="a",NAME="en",URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="s",NAME="English, US",URI="subs/en.m3u8"
            #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="cc",INSTREAM-ID="CC1"
            #EXT-X-STREAM-INF:BANDWIDTH=1,CODECS="avc1.640028,mp4a.40.2",AUDIO="a"
            v0/index.m3u8
            #EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI="iframes.m3u8"
            """
        let playlist = try #require(HLSReferences.parse(text))
        #expect(playlist.isMaster)
        #expect(playlist.references.map(\.uri) == ["audio/en.m3u8", "subs/en.m3u8", "v0/index.m3u8"])
        #expect(playlist.references.map(\.role) == [.rendition, .subtitles, .variant])
        #expect(playlist.references.map(\.line) == [2, 3, 6])
    }

    @Test("byte ranges continue from the previous sub-range; keys and maps are listed; FairPlay keys are skipped")
    func media() throws {
        let text = """
            \u{FEFF}#EXTM3U
            #EXT-X-MAP:URI="init.mp4",BYTERANGE="100@0"
            #EXT-X-KEY:METHOD=AES-128,URI="https://keys.example/k1"
            #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://fairplay",KEYFORMAT="com.apple.streamingkeydelivery"
            #EXTINF:4,
            #EXT-X-BYTERANGE:500@100
            all.mp4
            #EXTINF:4,
            #EXT-X-BYTERANGE:300
            all.mp4
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:4,
            last.mp4
            #EXT-X-ENDLIST
            """
        let playlist = try #require(HLSReferences.parse(text))
        #expect(!playlist.isMaster)
        #expect(playlist.hasEndList)
        #expect(playlist.skippedKeyURIs == ["skd://fairplay"])
        #expect(playlist.references.filter { $0.role == .initSegment }.map(\.byteRange) == [.closed(0, 99)])
        #expect(playlist.references.filter { $0.role == .key }.map(\.uri) == ["https://keys.example/k1"])
        #expect(playlist.segments.map(\.byteRange) == [.closed(100, 599), .closed(600, 899), nil])
    }

    @Test(
        "text that is not a playlist is refused", arguments: ["<html><body>404</body></html>", "", "EXTM3U", "<MPD/>"])
    func notPlaylist(text: String) {
        #expect(HLSReferences.parse(text) == nil)
    }

    @Test("attribute lists keep commas inside quotes")
    func attributes() throws {
        let playlist = try #require(
            HLSReferences.parse("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,NAME=\"a, b\",URI=\"x,y.m3u8\"\n"))
        #expect(playlist.references.first?.uri == "x,y.m3u8")
    }
}

@Suite("DASH references")
struct DASHReferencesTests {
    let base = WebURL("https://cdn.example/movie/manifest.mpd")!

    @Test("the sample manifest: init, first and last segment of each representation, by number")
    func sample() throws {
        let bytes = Array(
            try String(
                contentsOf: Repository.root().appendingPathComponent("Samples/dash/manifest.mpd"), encoding: .utf8
            ).utf8)
        let manifest = try DASHReferences.parse(bytes, url: base)
        #expect(manifest.representationCount == 2)
        #expect(
            manifest.references.map(\.url.description) == [
                "https://cdn.example/movie/init-0.m4s", "https://cdn.example/movie/chunk-0-1.m4s",
                "https://cdn.example/movie/chunk-0-2.m4s",
                "https://cdn.example/movie/init-1.m4s", "https://cdn.example/movie/chunk-1-1.m4s",
                "https://cdn.example/movie/chunk-1-2.m4s",
            ])
        #expect(manifest.problems == [])
    }

    @Test("SegmentTimeline with repeats, BaseURL hierarchy, $Time$ and padded $Number$")
    func timeline() throws {
        let text = """
            <?xml version="1.0"?>
            <MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" mediaPresentationDuration="PT60S">
              <BaseURL>https://media.example/base/</BaseURL>
              <Period>
                <AdaptationSet mimeType="video/mp4">
                  <BaseURL>video/</BaseURL>
                  <SegmentTemplate timescale="1000" initialization="$RepresentationID$/init.mp4" media="$RepresentationID$/$Time$-$Number%05d$.m4s" startNumber="7">
                    <SegmentTimeline><S t="0" d="2000" r="2"/><S d="1000"/><S d="4000" r="-1"/></SegmentTimeline>
                  </SegmentTemplate>
                  <Representation id="hd" bandwidth="5000000"/>
                </AdaptationSet>
              </Period>
            </MPD>
            """
        let manifest = try DASHReferences.parse(Array(text.utf8), url: base)
        // S1: 0, 2000, 4000 (#7-9); S2: 6000 (#10); S3 from 7000 every 4000 until the period ends at
        // 60000: 14 segments, the last starting at 59000 (#11-24).
        #expect(
            manifest.references.map(\.url.description) == [
                "https://media.example/base/video/hd/init.mp4", "https://media.example/base/video/hd/0-00007.m4s",
                "https://media.example/base/video/hd/59000-00024.m4s",
            ])
        let all = try DASHReferences.parse(Array(text.utf8), url: base, allSegments: true)
        #expect(all.references.count == 1 + 18)
    }

    @Test("SegmentList with ranges and SegmentBase with index ranges are requested with Range")
    func listsAndBases() throws {
        let text = """
            <MPD type="static" mediaPresentationDuration="PT10S"><Period>
              <AdaptationSet>
                <Representation id="a" mimeType="audio/mp4">
                  <SegmentList><Initialization sourceURL="a.mp4" range="0-799"/>
                    <SegmentURL media="a.mp4" mediaRange="800-1999"/><SegmentURL media="a.mp4" mediaRange="2000-2999"/><SegmentURL media="a.mp4" mediaRange="3000-3999"/>
                  </SegmentList>
                </Representation>
                <Representation id="b"><BaseURL>b.mp4</BaseURL>
                  <SegmentBase indexRange="900-1199"><Initialization range="0-899"/></SegmentBase>
                </Representation>
                <Representation id="c"><BaseURL>c.webm</BaseURL></Representation>
              </AdaptationSet>
            </Period></MPD>
            """
        let manifest = try DASHReferences.parse(Array(text.utf8), url: base)
        #expect(
            manifest.references.map { "\($0.url.path) \($0.role.rawValue) \($0.byteRange?.description ?? "-")" } == [
                "/movie/a.mp4 initSegment bytes=0-799", "/movie/a.mp4 segment bytes=800-1999",
                "/movie/a.mp4 segment bytes=3000-3999",
                "/movie/b.mp4 initSegment bytes=0-899", "/movie/b.mp4 segment bytes=900-1199",
                "/movie/c.webm segment -",
            ])
    }

    @Test("live manifests list only initialisation segments; unknown template identifiers are reported")
    func liveAndProblems() throws {
        let text = """
            <MPD type="dynamic"><Period><AdaptationSet>
              <SegmentTemplate initialization="init.mp4" media="$Number$.m4s" duration="2"/>
              <Representation id="x"/>
              <Representation id="y"><SegmentTemplate media="$Weird$.m4s" initialization="i-$Weird$.mp4"/></Representation>
            </AdaptationSet></Period></MPD>
            """
        let manifest = try DASHReferences.parse(Array(text.utf8), url: base)
        #expect(manifest.isLive)
        #expect(manifest.references.map(\.url.path) == ["/movie/init.mp4"])
        #expect(manifest.problems.count == 1)
    }

    @Test(
        "malformed XML and other roots are refused with a message",
        arguments: ["<MPD><Period>", "<html/>", "not xml", ""])
    func refused(text: String) {
        #expect(throws: DASHReferences.ParseError.self) { try DASHReferences.parse(Array(text.utf8), url: base) }
    }

    @Test("a manifest that declares entities is refused: external ones are never loaded, none is expanded")
    func entities() throws {
        let text =
            #"<!DOCTYPE MPD [<!ENTITY e SYSTEM "file:///etc/passwd">]><MPD><BaseURL>&e;</BaseURL><Period><AdaptationSet><Representation id="r"/></AdaptationSet></Period></MPD>"#
        let error = #expect(throws: DASHReferences.ParseError.self) {
            try DASHReferences.parse(Array(text.utf8), url: base)
        }
        #expect(error?.message.contains("entities") == true)
    }

    @Test("entity expansion bombs end at once with an error", arguments: XMLBomb.allCases)
    func entityBombs(bomb: XMLBomb) {
        let bytes = bomb.mpd
        #expect(bytes.count < 200_000)
        let start = threadCPUTime()  // the parse runs on this thread: its cost whatever the load
        let error = #expect(throws: DASHReferences.ParseError.self) { try DASHReferences.parse(bytes, url: base) }
        #expect(error?.message.contains("entities") == true)
        #expect(threadCPUTime() - start < .seconds(1))
    }
}

/// Entity expansion attacks, each under 200 KB: one 50 KB entity referenced 20,000 times in
/// text or in an attribute (1 GB expanded), and the nested "billion laughs".
enum XMLBomb: String, CaseIterable, Sendable {
    case largeEntityInText, largeEntityInAttribute, nestedLaughs

    var declarations: String {
        switch self {
        case .largeEntityInText, .largeEntityInAttribute:
            return "<!ENTITY big \"" + String(repeating: "A", count: 50_000) + "\">"
        case .nestedLaughs:
            var text = "<!ENTITY l0 \"lol\">"
            for level in 1...9 {
                text += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">"
            }
            return text
        }
    }

    var references: String {
        switch self {
        case .largeEntityInText, .largeEntityInAttribute: String(repeating: "&big;", count: 20_000)
        case .nestedLaughs: String(repeating: "&l9;", count: 100)
        }
    }

    var mpd: [UInt8] {
        let inAttribute = self == .largeEntityInAttribute
        let text =
            "<?xml version=\"1.0\"?>\n<!DOCTYPE MPD [\(declarations)]>\n"
            + "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" type=\"static\"\(inAttribute ? " id=\"\(references)\"" : "")>"
            + "<BaseURL>\(inAttribute ? "a/" : references)</BaseURL><Period><AdaptationSet mimeType=\"video/mp4\">"
            + "<Representation id=\"v\" codecs=\"avc1.64001f\"/></AdaptationSet></Period></MPD>\n"
        return Array(text.utf8)
    }
}
