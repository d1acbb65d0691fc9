import CastModel
import Foundation
@testable import Preflight
import Testing

@Suite("Report pieces")
struct ReportPieceTests {
    @Test("HTML escaping covers every character that could break out of text or an attribute")
    func escapes() {
        #expect(ReportPage.escape(#"<script>"a" & 'b'</script>"#) == "&lt;script&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/script&gt;")
    }

    @Test("output names can never leave the output folder", arguments: ["../../etc/passwd", "a/b", "", "é", String(repeating: "x", count: 500)])
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
        #expect(Readiness(worstOf: [Diagnostic(.note, "x", "n"), Diagnostic(.warning, "y", "w")]) == .readyWithWarnings)
        #expect(Readiness(worstOf: [Diagnostic(.error, "z", "e"), Diagnostic(.warning, "y", "w")]) == .blocked)
    }

    @Test("a card shows the verdict, findings and fixes, escaped")
    func card() {
        let item = ItemReport(
            id: "x<1>", index: 0, title: "A & B", contentID: "http://h/a.mp4", contentType: "video/mp4",
            diagnostics: [Diagnostic(.error, "http.cors-missing", "no <CORS>", fix: "add_header …")],
            devices: [DeviceReadiness(device: "chromecast-gen3", name: "Chromecast (3rd gen)", readiness: .blocked, reasons: [])],
            readiness: .blocked, fixes: ["add_header Access-Control-Allow-Origin *;"])
        let html = ReportPage.card(item, posterData: [0xFF, 0xD8])
        #expect(html.contains("A &amp; B"))
        #expect(html.contains("no &lt;CORS&gt;"))
        #expect(html.contains("data-readiness=\"blocked\""))
        #expect(html.contains("data-blocked-on=\"chromecast-gen3\""))
        #expect(html.contains("data:image/jpeg;base64,/9g="))
        #expect(html.contains("add_header Access-Control-Allow-Origin *;"))
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
        let abstract = String(decoding: serving.abstracting(Array("{\"u\":\"http://10.0.0.2:8001/x.mp4\"}".utf8)), as: UTF8.self)
        #expect(!abstract.contains("10.0.0.2"))
        let moved = LocalServing(mounts: [
            .init(root: "/media", baseURL: "http://127.0.0.1:9000/"),
            .init(root: "/media/plain", baseURL: "http://127.0.0.1:9001/"),
        ])
        #expect(String(decoding: moved.concretizing(Array(abstract.utf8)), as: UTF8.self) == "{\"u\":\"http://127.0.0.1:9001/x.mp4\"}")
        #expect(ByteText.replacing(Array("aa".utf8), with: Array("b".utf8), in: Array("aaa-aa".utf8)) == Array("ba-b".utf8))
    }

    @Test("the common folder of local files")
    func commonFolder() {
        #expect(ServedFolders.commonFolder(of: ["/a/b/c.mp4", "/a/b/d/e.vtt", "/a/b/f.jpg"]) == "/a/b")
        #expect(ServedFolders.commonFolder(of: ["/a/x.mp4", "/b/y.mp4"]) == "/")
    }
}
