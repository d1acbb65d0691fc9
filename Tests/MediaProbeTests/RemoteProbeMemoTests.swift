import CastModel
import Foundation
import MediaProbe
import Testing
import TestSupport

@Suite("Remote probes answered by their bytes (loopback)", .serialized, .requires(.ffmpeg))
struct RemoteProbeMemoTests {
    /// A folder with three copies of `sample` and a fourth of the same length whose last byte
    /// differs; removed by the caller.
    static func copies(of sample: String) throws -> (directory: URL, names: [String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-memo-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let source = Repository.root().appendingPathComponent("Samples/\(sample)")
        let ext = source.pathExtension
        var bytes = try Data(contentsOf: source)
        let names = ["a.\(ext)", "b.\(ext)", "c.\(ext)", "changed.\(ext)"]
        for name in names.prefix(3) {
            try bytes.write(to: directory.appendingPathComponent(name))
        }
        bytes[bytes.count - 1] ^= 0xFF
        try bytes.write(to: directory.appendingPathComponent(names[3]))
        return (directory, names)
    }

    @Test(
        "a URL serving bytes probed before gets that answer; FFmpeg's own answer otherwise",
        arguments: ["h264-aac-faststart.mp4", "h264-aac-moov-at-end.mp4", "hevc-aac.mp4", "vp9-opus.webm", "tone.mp3"])
    func sameBytes(sample: String) async throws {
        let (directory, names) = try Self.copies(of: sample)
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await LoopbackServer(serving: directory)
        let base = "http://127.0.0.1:\(server.port)/"
        let memo = RemoteProbeMemo()
        let prober = MediaProber(remoteMemo: memo)
        var requests: [String: Int] = [:]
        for name in names {
            let before = server.requests.count
            let remembered = try prober.probeBlocking(path: base + name)
            requests[name] = server.requests.count - before
            let plain = try MediaProber().probeBlocking(path: base + name)
            #expect(remembered == plain, "\(name)")
        }
        // a: a length not seen before, so not read ahead; b: read ahead, probed and kept; c:
        // answered from b's entry after the one request that read it; changed: the same
        // length with other bytes, so probed and kept as a second entry.
        #expect(memo.count == 2)
        #expect(memo.answered == 1)
        #expect(requests[names[2]] == 1, "\(requests)")
    }

    @Test("a body over the size limit is never read ahead")
    func overLimit() async throws {
        let (directory, names) = try Self.copies(of: "h264-aac-faststart.mp4")
        defer { try? FileManager.default.removeItem(at: directory) }
        let server = try await LoopbackServer(serving: directory)
        let memo = RemoteProbeMemo(sizeLimit: 1024)
        let prober = MediaProber(remoteMemo: memo)
        for name in names.prefix(3) {
            _ = try prober.probeBlocking(path: "http://127.0.0.1:\(server.port)/\(name)")
        }
        #expect(memo.count == 0)
        #expect(memo.answered == 0)
    }

    @Test("an HLS playlist is never read ahead nor kept: its answer depends on what it lists")
    func playlists() async throws {
        let server = try await LoopbackServer(serving: Repository.root().appendingPathComponent("Samples"))
        let url = "http://127.0.0.1:\(server.port)/hls-fmp4/index.m3u8"
        let memo = RemoteProbeMemo()
        var requests: [Int] = []
        for _ in 0..<3 {
            let before = server.requests.count
            let remembered = try MediaProber(remoteMemo: memo).probeBlocking(path: url)
            requests.append(server.requests.count - before)
            #expect(remembered == (try MediaProber().probeBlocking(path: url)))
        }
        #expect(memo.count == 0)
        #expect(Set(requests).count == 1, "\(requests)")
    }

    @Test("failures are not kept, and the error is FFmpeg's")
    func failures() async throws {
        let (directory, _) = try Self.copies(of: "h264-aac-faststart.mp4")
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(repeating: 0x41, count: 4096).write(to: directory.appendingPathComponent("x.mp4"))
        try Data(repeating: 0x41, count: 4096).write(to: directory.appendingPathComponent("y.mp4"))
        try Data(repeating: 0x41, count: 4096).write(to: directory.appendingPathComponent("z.mp4"))
        let server = try await LoopbackServer(serving: directory)
        let memo = RemoteProbeMemo()
        for name in ["x.mp4", "y.mp4", "z.mp4"] {
            let url = "http://127.0.0.1:\(server.port)/\(name)"
            let remembered = Result { () throws(ProbeError) in
                try MediaProber(remoteMemo: memo).probeBlocking(path: url)
            }
            let plain = Result { () throws(ProbeError) in try MediaProber().probeBlocking(path: url) }
            #expect(remembered.errorCode == plain.errorCode)
            #expect(remembered.errorCode != nil)
        }
        #expect(memo.count == 0)
    }
}

extension Result where Success == ProbeResult, Failure == ProbeError {
    fileprivate var errorCode: String? {
        guard case .failure(let error) = self else { return nil }
        return error.code.rawValue
    }
}
