// libFuzzer entry point for HTTPCheck's parsers of untrusted server output: response heads,
// header lists, Content-Range, URL resolution, and the HLS and DASH reference walkers (byte
// ranges, durations, segment numbers and times from hostile manifests, and the segment sample a
// check fetches, which once indexed an empty live playlist). The first byte picks the parser.
// Built by Scripts/fuzz/http.
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
            for segment in playlist.sampledSegments {
                // A kept byte range is a real range: first <= last, both from overflow-checked sums.
                if case .closed(let first, let last)? = segment.byteRange, first > last { fatalError("range \(first)-\(last)") }
            }
            _ = playlist.problems.map(\.message)
        }
    case 3:
        if let manifest = try? DASHReferences.parse(bytes, url: base, allSegments: false) { _ = manifest.outOfRange }
    default:
        if let manifest = try? DASHReferences.parse(bytes, url: base, allSegments: true) {
            guard manifest.references.count <= manifest.representationCount * (DASHReferences.maximumSegmentsPerRepresentation + 2)
            else { fatalError("\(manifest.references.count) references for \(manifest.representationCount) representations") }
        }
    }
    return 0
}
