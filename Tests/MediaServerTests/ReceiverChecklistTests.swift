import Foundation
import MediaServer
import Testing
import TestSupport

/// Runs curl the way a receiver fetches (Origin of the Default Media Receiver, a Range, a
/// preflight) and returns the response head.
func curlHead(_ arguments: [String]) async throws -> HTTPResponse {
    try await onOwnThread {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["curl", "--silent", "--show-error", "--max-time", "10", "--output", "/dev/null", "--dump-header", "-"]
            + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard let response = RawHTTP.parse(Array(data) + [13, 10, 13, 10]) else {
            throw SocketFailure(
                description: "curl \(arguments) printed no response: \(String(decoding: data, as: UTF8.self))")
        }
        return response
    }
}

/// The checks of the reference checklist for a Cast-ready URL (GET with the receiver's origin
/// and `Range: bytes=0-1`, then a preflight), run with curl against `castprep serve`'s server
/// over every file in Samples/, and along the HLS and DASH references.
@Suite("the server passes the receiver's checks on every sample", .requires(.curl))
struct ReceiverChecklistTests {
    static let origin = "https://www.gstatic.com"

    /// The type each sample must be served with, by extension.
    static let expectedType: [String: String] = [
        "mp4": "video/mp4", "m4s": "video/mp4", "ts": "video/mp2t", "m3u8": "application/vnd.apple.mpegurl",
        "mpd": "application/dash+xml", "vtt": "text/vtt; charset=utf-8", "srt": "application/x-subrip",
        "ass": "text/x-ssa",
        "mkv": "video/x-matroska", "webm": "video/webm", "mp3": "audio/mpeg", "flac": "audio/flac", "opus": "audio/ogg",
    ]

    static var samples: [String] {
        let root = Repository.root().appendingPathComponent("Samples").path
        let walker = FileManager.default.enumerator(atPath: root)
        var files: [String] = []
        while let next = walker?.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + next, isDirectory: &isDirectory),
                !isDirectory.boolValue, expectedType[(next as NSString).pathExtension] != nil
            {
                files.append(next)
            }
        }
        return files.sorted()
    }

    @Test(
        "GET with Origin and Range: 206, exact Content-Range, Accept-Ranges, CORS, the right type; preflight: 204 allowing Range"
    )
    func everySample() async throws {
        let root = Repository.root().appendingPathComponent("Samples").path
        try await withServer(root: root) { endpoint, _ in
            try await Self.check(Self.samples, root: root, endpoint: endpoint)
        }
    }

    static func check(_ samples: [String], root: String, endpoint: MediaServer.Endpoint) async throws {
        #expect(samples.count >= 25)
        for sample in samples {
            let url = endpoint.url(forPath: sample)
            let size = try #require(FileManager.default.attributesOfItem(atPath: root + "/" + sample)[.size] as? Int)
            let get = try await curlHead(["-H", "Origin: \(Self.origin)", "-H", "Range: bytes=0-1", url])
            #expect(get.status == 206, "\(sample)")
            #expect(get.header("Content-Range") == "bytes 0-1/\(size)", "\(sample)")
            #expect(get.header("Content-Length") == "2", "\(sample)")
            #expect(get.header("Accept-Ranges") == "bytes", "\(sample)")
            #expect(get.header("Access-Control-Allow-Origin") == "*", "\(sample)")
            #expect(get.header("Access-Control-Expose-Headers")?.contains("Content-Range") == true, "\(sample)")
            #expect(get.header("Content-Type") == Self.expectedType[(sample as NSString).pathExtension], "\(sample)")

            let preflight = try await curlHead([
                "-X", "OPTIONS", "-H", "Origin: \(Self.origin)", "-H", "Access-Control-Request-Method: GET",
                "-H", "Access-Control-Request-Headers: range", url,
            ])
            #expect(preflight.status == 204, "\(sample)")
            #expect(preflight.header("Access-Control-Allow-Origin") == "*", "\(sample)")
            let allowed = (preflight.header("Access-Control-Allow-Headers") ?? "").lowercased()
            #expect(["range", "content-type", "accept-encoding"].allSatisfy(allowed.contains), "\(sample)")
            #expect(preflight.header("Access-Control-Allow-Methods")?.contains("GET") == true, "\(sample)")
        }
    }

    @Test("every playlist and manifest reference resolves through the server with CORS")
    func references() async throws {
        let root = Repository.root().appendingPathComponent("Samples").path
        try await withServer(root: root) { endpoint, _ in try await Self.walk(endpoint: endpoint) }
    }

    static func walk(endpoint: MediaServer.Endpoint) async throws {
        var pending = ["hls-ts/master.m3u8", "hls-fmp4/index.m3u8"]
        var visited: Set<String> = []
        while let next = pending.popLast() {
            guard visited.insert(next).inserted else { continue }
            let response = try await request(
                endpoint.url(forPath: next).replacingOccurrences(of: endpoint.baseURL, with: "/"), port: endpoint.port,
                headers: [("Origin", Self.origin)])
            #expect(response.status == 200, "\(next)")
            #expect(response.header("Access-Control-Allow-Origin") == "*", "\(next)")
            guard next.hasSuffix(".m3u8") else { continue }
            let directory = (next as NSString).deletingLastPathComponent
            for line in response.text.split(separator: "\n") {
                var references: [String] = []
                if !line.hasPrefix("#") { references.append(String(line)) }
                if let range = line.range(of: "URI=\"") {
                    references.append(String(line[range.upperBound...].prefix { $0 != "\"" }))
                }
                for reference in references where !reference.isEmpty {
                    pending.append((directory as NSString).appendingPathComponent(reference))
                }
            }
        }
        #expect(visited.count >= 12)
        #expect(visited.contains("hls-ts/subs/en.vtt"))
        #expect(visited.contains("hls-fmp4/init.mp4"))
    }
}
