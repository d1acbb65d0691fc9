// libFuzzer entry point for HTTPCheck's parsers of untrusted server output: response heads,
// header lists, Content-Range, URL resolution, and the HLS and DASH reference walkers. The
// first byte picks the parser. Built by Scripts/fuzz/http.
import HTTPCheck

let fuzzBase = WebURL("https://cdn.example/media/master.m3u8")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0, let base = fuzzBase else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let text = String(decoding: bytes, as: UTF8.self)
    switch data[0] % 5 {
    case 0:
        if let head = HTTPResponseHead.parse(bytes) {
            _ = head.headers.listElements("access-control-allow-headers")
            _ = head.headers["content-range"].flatMap(ContentRange.parse)
        }
    case 1:
        _ = ContentRange.parse(text)
        for line in text.split(separator: "\n").prefix(64) {
            if let url = base.resolving(String(line)) { _ = (url.origin, url.pathExtension, url.isLoopback, url.description) }
        }
    case 2:
        if let playlist = HLSReferences.parse(text) {
            for reference in playlist.references.prefix(1000) { _ = base.resolving(reference.uri) }
        }
    case 3:
        _ = try? DASHReferences.parse(bytes, url: base, allSegments: false)
    default:
        _ = try? DASHReferences.parse(bytes, url: base, allSegments: true)
    }
    return 0
}
