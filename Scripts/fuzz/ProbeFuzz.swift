// libFuzzer entry point for the media probe: each input is written to a file and probed, then
// judged against every device profile, read as an HLS playlist (its duration and packaging too),
// as a DASH manifest and as the first bytes of an MP4 (its movie duration). Built by
// Scripts/fuzz/probe.
import Foundation
import MediaProbe
import StreamingFormats

let fuzzDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-probe-fuzz-\(getpid())")
let fuzzPrepared: Void = { try? FileManager.default.createDirectory(at: fuzzDirectory, withIntermediateDirectories: true) }()
let fuzzExtensions = ["mp4", "mkv", "ts", "webm", "mp3", "m3u8", "mpd"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    _ = fuzzPrepared
    let bytes = Data(bytes: data, count: size)
    // The first byte picks the extension, which steers container detection and HLS parsing.
    let ext = fuzzExtensions[Int(size > 0 ? data[0] : 0) % fuzzExtensions.count]
    let url = fuzzDirectory.appendingPathComponent("input.\(ext)")
    guard (try? bytes.write(to: url)) != nil else { return 0 }
    if let result = try? MediaProber(limits: .init(probeBytes: 1_000_000, timeout: 5)).probeBlocking(path: url.path) {
        _ = DeviceJudge().verdicts(for: result)
    }
    if let text = String(data: bytes, encoding: .utf8), case .media(let playlist)? = HLSPlaylist.parse(text) {
        // EXTINF values past a day count as unknown, so the sum stays a duration a player holds.
        guard playlist.duration.isFinite, playlist.duration >= 0 else { fatalError("playlist duration \(playlist.duration)") }
        _ = (playlist.segmentPackaging, playlist.isLive)
    }
    // DASH manifests through CLibXML2's hardened reader (entities declared empty, then refused).
    _ = try? DASHManifest.parse(Array(bytes))
    if let seconds = MP4Boxes.movieDuration(Array(bytes)), !(seconds.isFinite && seconds > 0) { fatalError("movie duration \(seconds)") }
    return 0
}
