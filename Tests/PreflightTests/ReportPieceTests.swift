import CastModel
import Foundation
import MediaProbe
@testable import Preflight
import Testing

@Suite("Report pieces")
struct ReportPieceTests {
    @Test("HTML escaping covers every character that could break out of text or an attribute")
    func escapes() {
        #expect(
            ReportPage.escape(#"<script>"a" & 'b'</script>"#)
                == "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;")
    }

    @Test(
        "output names can never leave the output folder",
        arguments: ["../../etc/passwd", "a/b", "", "é", String(repeating: "x", count: 500)])
    func safeNames(id: String) {
        let name = OutputNames.caption(itemID: id, index: 0, language: "../en")
        #expect(!name.contains(".."))
        #expect(name.hasPrefix("captions/"))
        #expect(name.split(separator: "/").count == 2)
        #expect(name.count < 120)
    }

    @Test("readiness is the worst finding's")
    func readiness() {
        #expect(Readiness(worstOf: []) == .ready)
        #expect(Readiness(worstOf: [Diagnostic(.note, "x", "n")]) == .ready)
        #expect(
            Readiness(worstOf: [Diagnostic(.note, "x", "n"), Diagnostic(.warning, "y", "w")]) == .readyWithWarnings)
        #expect(Readiness(worstOf: [Diagnostic(.error, "z", "e"), Diagnostic(.warning, "y", "w")]) == .blocked)
    }

    @Test("a card shows the verdict, findings and fixes, escaped")
    func card() {
        let item = ItemReport(
            id: "x<1>", index: 0, title: "A & B", contentID: "http://h/a.mp4", contentType: "video/mp4",
            diagnostics: [Diagnostic(.error, "http.cors-missing", "no <CORS>", fix: "add_header …")],
            devices: [
                DeviceReadiness(
                    device: "chromecast-gen3", name: "Chromecast (3rd gen)", readiness: .blocked, reasons: [])
            ],
            readiness: .blocked, fixes: ["add_header Access-Control-Allow-Origin *;"])
        let html = ReportPage.card(item)
        #expect(html.contains("A &amp; B"))
        #expect(html.contains("no &lt;CORS&gt;"))
        #expect(html.contains("<article class=\"card blocked\""))
        #expect(html.contains("data-blocked-on=\"chromecast-gen3\""))
        #expect(html.contains("data-codes=\"http.cors-missing\""))
        #expect(html.contains("add_header <span>Access-Control-Allow-Origin</span> *;"))
    }

    @Test("served on loopback, the header says so once and the cards leave out their url.loopback notes")
    func loopbackSaidOnce() {
        let note = Diagnostic(.note, "url.loopback", "contentId points at 127.0.0.1", url: "http://127.0.0.1:1/a.mp4")
        let item = ItemReport(id: "a", index: 0, diagnostics: [note])
        #expect(ReportPage.card(item).contains("<code>url.loopback</code>"))
        #expect(!ReportPage.card(item, servedOnLoopback: true).contains("<code>url.loopback</code>"))
        let header = ReportPage.header(
            title: "t", summary: PreflightSummary(), devices: [], catalog: "c.json", servedOnLoopback: true)
        #expect(header.contains("Served on loopback"))
        #expect(
            !ReportPage.header(title: "t", summary: PreflightSummary(), devices: [], catalog: "c.json").contains(
                "Served on loopback"))
    }

    @Test("a fix wraps at spaces only: each word with a hyphen is kept whole, and escaped")
    func fixWords() {
        #expect(
            ReportPage.fixHTML("ffmpeg -i 'a<b>.mp4' -c copy -movflags +faststart out.mp4")
                == "ffmpeg <span>-i</span> &#39;a&lt;b&gt;.mp4&#39; <span>-c</span> copy <span>-movflags</span> +faststart out.mp4"
        )
        #expect(ReportPage.fixHTML("two\nlines") == "two\nlines")
    }

    @Test(
        "an ASCII fix and the same fix with a non-ASCII file name are split alike",
        arguments: [
            "ffmpeg -i in.mp4 -c copy out.mp4", "a\r\n-b\t-c  d-e -", " -lead trail- ", "", "-", "x\u{0B}y-z\u{0C}",
        ])
    func fixWordsASCII(fix: String) {
        // "é" takes the byte path off; the words around it are split the same way.
        let plain = ReportPage.fixHTML(fix + " é")
        let ascii = ReportPage.fixHTML(fix)
        #expect(plain == ascii + " é")
    }

    @Test(
        "a finding's devices in the fewest words",
        arguments: [
            (["a", "b", "c", "d", "e"], "every device"), (["a", "b", "c", "d"], "every device but e"),
            (["a", "b"], "a, b"), (["a"], "a"),
        ])
    func deviceList(names: [String], expected: String) {
        #expect(ReportPage.deviceList(names, of: ["a", "b", "c", "d", "e"]) == expected)
    }

    @Test(
        "a poster is the file beside the page, never inlined; without one, the placeholder says video, audio or live",
        arguments: [
            (true, nil, "\"poster none video\""), (false, nil, "\"poster none audio\""),
            (nil, nil, "\"poster none media\""),
            (true, "LIVE", "\"poster none live\""), (true, "posters/a_b.jpg", "src=\"posters/a_b.jpg\""),
        ])
    func poster(hasVideo: Bool?, extra: String?, expected: String) {
        var item = ItemReport(id: "a b", index: 0, hasVideo: hasVideo)
        if extra == "LIVE" { item.streamType = "LIVE" } else { item.poster = extra }
        let html = ReportPage.card(item)
        #expect(html.contains(expected), "\(html)")
        #expect(!html.contains("data:image"))
    }

    @Test("a card blocked on every device says so in one line; one blocked on some lists each device")
    func blockedEverywhere() {
        let missing = Diagnostic(.error, "media.file-missing", "the media file is gone", fix: "restore the file")
        let everywhere = ItemReport(
            id: "x", index: 0, diagnostics: [missing],
            devices: DeviceProfile.all.map {
                DeviceReadiness(device: $0.id, name: $0.name, readiness: .blocked, reasons: [])
            }, readiness: .blocked)
        let html = ReportPage.card(everywhere)
        #expect(html.contains("Blocked on every device: <code>media.file-missing</code>"))
        #expect(!html.contains("device-verdicts"))
        var some = everywhere
        some.devices[0].readiness = .ready
        let mixed = ReportPage.card(some)
        #expect(!mixed.contains("Blocked on every device"))
        // One line per verdict, naming its devices.
        #expect(
            mixed.contains(
                "<li class=\"blocked\"><b>Blocked</b> on \(DeviceProfile.all.dropFirst().map { ReportPage.escape($0.name) }.joined(separator: ", "))</li>"
            ))
        #expect(
            mixed.contains("<li class=\"ready\"><b>Ready</b> on \(ReportPage.escape(DeviceProfile.all[0].name))</li>"))
    }

    @Test("an item counts once per code, however many devices report it, and the problem groups keep one fix")
    func perItemCounts() {
        let reasons = [Diagnostic(.warning, "device.video-codec", "vP9 does not play", fix: "ffmpeg -i 'a.webm' a.mp4")]
        let devices = DeviceProfile.all.prefix(4).map { device in
            DeviceReadiness(
                device: device.id, name: device.name, readiness: .readyWithWarnings,
                reasons: reasons.map { reason in
                    var copy = reason
                    copy.message = device.name + " " + copy.message
                    return copy
                })
        }
        let item = ItemReport(id: "a", index: 0, title: "A", devices: devices, readiness: .readyWithWarnings)
        let digest = ItemDigest(item)
        #expect(digest.codes == ["device.video-codec"])
        var summary = PreflightSummary()
        summary.add(digest)
        summary.add(digest)
        #expect(summary.codes == ["device.video-codec": 2])
        var group = ProblemGroup(digest.problems[0], itemName: "A")
        group.add(digest.problems[0], itemName: "A")
        var other = digest.problems[0]
        other.fix = "ffmpeg -i 'b.webm' b.mp4"
        group.add(other, itemName: "B")
        #expect(group.items == 2)
        #expect(group.fix == "ffmpeg -i 'a.webm' a.mp4")
        #expect(group.fixesDiffer)
        // On the card: one line naming the four devices, the device's name taken off the front.
        let lines = ReportPage.findingLines(item)
        #expect(lines.count == 1)
        #expect(lines.first?.message == "VP9 does not play")
        #expect(lines.first?.devices == DeviceProfile.all.prefix(4).map(\.name))
        let footer = ReportPage.footer(problems: [group])
        #expect(footer.contains("<code>device.video-codec</code> · 2 items"))
        #expect(footer.contains("as for “A”"))
    }

    @Test("media that was not probed is video or audio by its content type or extension")
    func mediaKind() {
        #expect(ItemInspector.hasVideo(contentType: "video/mp4", url: nil) == true)
        #expect(ItemInspector.hasVideo(contentType: "audio/mpeg", url: nil) == false)
        #expect(
            ItemInspector.hasVideo(contentType: "application/x-mpegurl; codecs=\"avc1.64001f,mp4a.40.2\"", url: nil)
                == true)
        #expect(ItemInspector.hasVideo(contentType: "application/x-mpegurl; codecs=\"mp4a.40.2\"", url: nil) == false)
        #expect(ItemInspector.hasVideo(contentType: "application/x-mpegurl", url: "http://h/a/master.m3u8") == nil)
        #expect(ItemInspector.hasVideo(contentType: nil, url: "http://h/a/episode.mp4?x=1") == true)
        #expect(ItemInspector.hasVideo(contentType: nil, url: "file:///music/song.flac") == false)
    }

    @Test("local files map to the deepest served folder, and cached text survives a new port")
    func serving() {
        let serving = LocalServing(mounts: [
            .init(root: "/media", baseURL: "http://10.0.0.2:8000/"),
            .init(root: "/media/plain", baseURL: "http://10.0.0.2:8001"),
        ])
        #expect(serving.url(forFile: "/media/a b.mp4") == "http://10.0.0.2:8000/a%20b.mp4")
        #expect(serving.url(forFile: "/media/plain/x.mp4") == "http://10.0.0.2:8001/x.mp4")
        #expect(serving.url(forFile: "/elsewhere/x.mp4") == nil)
        let abstract = String(
            decoding: serving.abstracting(Array("{\"u\":\"http://10.0.0.2:8001/x.mp4\"}".utf8)), as: UTF8.self)
        #expect(!abstract.contains("10.0.0.2"))
        let moved = LocalServing(mounts: [
            .init(root: "/media", baseURL: "http://127.0.0.1:9000/"),
            .init(root: "/media/plain", baseURL: "http://127.0.0.1:9001/"),
        ])
        #expect(
            String(decoding: moved.concretizing(Array(abstract.utf8)), as: UTF8.self)
                == "{\"u\":\"http://127.0.0.1:9001/x.mp4\"}")
        #expect(
            ByteText.replacing(Array("aa".utf8), with: Array("b".utf8), in: Array("aaa-aa".utf8)) == Array("ba-b".utf8))
    }

    @Test("the common folder of local files")
    func commonFolder() {
        #expect(ServedFolders.commonFolder(of: ["/a/b/c.mp4", "/a/b/d/e.vtt", "/a/b/f.jpg"]) == "/a/b")
        #expect(ServedFolders.commonFolder(of: ["/a/x.mp4", "/b/y.mp4"]) == "/")
    }
}
