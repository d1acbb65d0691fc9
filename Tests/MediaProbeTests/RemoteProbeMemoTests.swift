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
        let directory = try TemporaryFolder.create("memo")
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

    /// Serves the ``copies(of:)`` of `sample` on loopback and probes each in turn through one
    /// memo with `probe` (given the prober, the URL and the copy's bytes), expecting the answer
    /// a prober without a memo gives; returns the memo, the names, and the requests each made.
    static func probeCopies(
        of sample: String, _ probe: (MediaProber, String, [UInt8]) async throws -> ProbeResult
    ) async throws -> (memo: RemoteProbeMemo, names: [String], requests: [String: Int]) {
        let (directory, names) = try copies(of: sample)
        defer { TemporaryFolder.remove(directory) }
        let server = try await LoopbackServer(serving: directory)
        let base = "http://127.0.0.1:\(server.port)/"
        let memo = RemoteProbeMemo()
        let prober = MediaProber(remoteMemo: memo)
        var requests: [String: Int] = [:]
        for name in names {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(name)))
            let before = server.requests.count
            let remembered = try await probe(prober, base + name, bytes)
            requests[name] = server.requests.count - before
            let plain = try MediaProber().probeBlocking(path: base + name)
            #expect(remembered == plain, "\(name)")
        }
        return (memo, names, requests)
    }

    @Test(
        "a URL serving bytes probed before gets that answer; FFmpeg's own answer otherwise",
        arguments: ["h264-aac-faststart.mp4", "h264-aac-moov-at-end.mp4", "hevc-aac.mp4", "vp9-opus.webm", "tone.mp3"])
    func sameBytes(sample: String) async throws {
        let (memo, names, requests) = try await Self.probeCopies(of: sample) { prober, url, _ in
            try prober.probeBlocking(path: url)
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

@Suite("Remote probes answered by a response fetched before them (loopback)", .serialized, .requires(.ffmpeg))
struct FetchedProbeMemoTests {
    /// The key of `bytes` served whole with a 206, as a check's `Range: bytes=0-` answer.
    static func key(url: String, bytes: [UInt8], type: String = "video/mp4", limit: Int = 1 << 20)
        -> RemoteProbeMemo.FetchedKey?
    {
        let headers = [
            "content-type": type, "content-length": String(bytes.count),
            "content-range": "bytes 0-\(bytes.count - 1)/\(bytes.count)", "accept-ranges": "bytes",
        ]
        return RemoteProbeMemo.FetchedKey(
            url: url, status: 206, header: { headers[$0] }, body: bytes, isComplete: true, sizeLimit: limit)
    }

    @Test(
        "a URL whose fetched start equals one probed before gets that answer without a request; others are probed",
        arguments: ["h264-aac-moov-at-end.mp4", "vp9-opus.webm", "tone.mp3"])
    func sameResponse(sample: String) async throws {
        let (memo, names, requests) = try await RemoteProbeMemoTests.probeCopies(of: sample) { prober, url, bytes in
            let key = try #require(Self.key(url: url, bytes: bytes))
            return try await prober.probe(path: url, fetched: key).get()
        }
        // a: probed by FFmpeg (no read-ahead) and kept; b and c: answered without a request;
        // changed: other bytes, so probed and kept. Each answer is kept under its fetched key
        // and under the key of what FFmpeg opened.
        #expect(requests[names[0]] ?? 0 > 0)
        #expect(requests[names[1]] == 0, "\(requests)")
        #expect(requests[names[2]] == 0, "\(requests)")
        #expect(requests[names[3]] ?? 0 > 0)
        #expect(memo.count == 4)
        #expect(memo.answered == 2)
    }

    @Test(
        "an answer kept for a fetched start answers the same bytes opened by FFmpeg under another URL (a redirected copy has no fetched key), and the other way round",
        arguments: ["h264-aac-faststart.mp4", "tone.mp3"])
    func sharedWithOpened(sample: String) async throws {
        let (directory, names) = try RemoteProbeMemoTests.copies(of: sample)
        defer { TemporaryFolder.remove(directory) }
        let server = try await LoopbackServer(serving: directory)
        let urls = names.prefix(3).map { "http://127.0.0.1:\(server.port)/\($0)" }
        let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(names[0])))
        func expectPlain(_ answer: ProbeResult, _ url: String) throws {
            #expect(answer == (try MediaProber().probeBlocking(path: url)), "\(url)")
        }
        /// The requests `probe` made; its answer must be FFmpeg's own.
        func requests(_ probe: () async throws -> ProbeResult, _ url: String) async throws -> Int {
            let before = server.requests.count
            let answer = try await probe()
            let count = server.requests.count - before
            try expectPlain(answer, url)
            return count
        }

        // Fetched, then opened: the second URL is read ahead once and answered.
        let memo = RemoteProbeMemo()
        let prober = MediaProber(remoteMemo: memo)
        let key = try #require(Self.key(url: urls[0], bytes: bytes))
        _ = try await requests({ try await prober.probe(path: urls[0], fetched: key).get() }, urls[0])
        #expect(try await requests({ try prober.probeBlocking(path: urls[1]) }, urls[1]) == 1)
        #expect(memo.answered == 1)

        // Opened twice (the second read ahead and kept), then fetched: FFmpeg's open of the
        // fetched URL is answered, and later fetches of the same bytes need no request.
        let other = RemoteProbeMemo()
        let second = MediaProber(remoteMemo: other)
        _ = try await requests({ try second.probeBlocking(path: urls[0]) }, urls[0])
        _ = try await requests({ try second.probeBlocking(path: urls[1]) }, urls[1])
        #expect(other.answered == 0)
        let fetched = try #require(Self.key(url: urls[2], bytes: bytes))
        #expect(try await requests({ try await second.probe(path: urls[2], fetched: fetched).get() }, urls[2]) == 1)
        #expect(other.answered == 1)
        #expect(try await requests({ try await second.probe(path: urls[0], fetched: key).get() }, urls[0]) == 0)
        #expect(other.answered == 2)
    }

    @Test("another type, length or extension is another key; a redirect or a partial body has none")
    func keys() throws {
        let bytes = [UInt8](repeating: 7, count: 100)
        let url = "http://h/a.mp4"
        let key = try #require(Self.key(url: url, bytes: bytes))
        #expect(Self.key(url: "http://h/b.mp4", bytes: bytes) == key)
        #expect(Self.key(url: "http://h/a.mov", bytes: bytes) != key)
        #expect(Self.key(url: url, bytes: bytes, type: "application/octet-stream") != key)
        #expect(Self.key(url: url, bytes: bytes + [7]) != key)
        #expect(Self.key(url: url, bytes: bytes, limit: 99) == nil)
        #expect(Self.key(url: "http://h/a.m3u8", bytes: bytes) == nil)
        #expect(Self.key(url: "http://h/a", bytes: bytes, type: "application/vnd.apple.mpegurl") == nil)
        // A redirect, a body cut short, a body shorter than its Content-Length, an error.
        for (status, complete, length) in [
            (302, true, "100"), (206, false, "100"), (200, true, "101"), (404, true, "100"),
        ] {
            let fields = ["content-length": length, "location": "/b.mp4"]
            #expect(
                RemoteProbeMemo.FetchedKey(
                    url: url, status: status, header: { fields[$0] }, body: bytes, isComplete: complete,
                    sizeLimit: 1 << 20) == nil, "\(status) \(complete) \(length)")
        }
        #expect(
            RemoteProbeMemo.FetchedKey(
                url: url, status: 200, header: { _ in nil }, body: [], isComplete: true, sizeLimit: 1 << 20) == nil)
    }
}

extension Result where Success == ProbeResult, Failure == ProbeError {
    fileprivate var errorCode: String? {
        guard case .failure(let error) = self else { return nil }
        return error.code.rawValue
    }
}
