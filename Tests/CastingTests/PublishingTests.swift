import CastModel
import Casting
import MediaServer
import Foundation
import Testing

/// `cast` publishes the cast file alone, under a token, to the device's address alone.
@Suite("cast publishes only the cast files, to the device")
struct CastPublishingTests {
    /// The status curl gets for `url` from the local address `source`, off the cooperative pool.
    private static func status(_ url: String, from source: String) async throws -> Int {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
                        process.arguments = [
                            "--silent", "--interface", source, "--max-time", "5", "--output", "/dev/null",
                            "--write-out", "%{http_code}", url,
                        ]
                        let pipe = Pipe()
                        process.standardOutput = pipe
                        try process.run()
                        let data = pipe.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        return Int(String(decoding: data, as: UTF8.self)) ?? 0
                    })
            }
        }
    }

    @Test(
        "the device's address gets the file; another client gets 403; the folder's other files and bare paths get 404")
    func onlyTheDevice() async throws {
        let folder = NSTemporaryDirectory() + "castprep-cast-publishing-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sample = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "../../Samples/h264-aac-faststart.mp4"
        ).path
        try FileManager.default.copyItem(atPath: sample, toPath: folder + "/movie.mp4")
        try Data("private".utf8).write(to: URL(fileURLWithPath: folder + "/diary.txt"))
        let inputs = try CastInputs.read([folder + "/movie.mp4"])
        let plan = try await CastPlanner(options: CastPlanOptions(deviceHost: "127.0.0.1")).plan(inputs)
        defer { plan.stopServing() }
        let url = try #require(plan.items.first?.queueItem.media?.contentID)
        let base = try #require(plan.serverEndpoint?.baseURL)
        #expect(url.hasPrefix(base))
        #expect(try await Self.status(url, from: "127.0.0.1") == 200)
        #expect(try await Self.status(url, from: "127.0.0.2") == 403)
        #expect(
            try await Self.status(url.replacingOccurrences(of: "movie.mp4", with: "diary.txt"), from: "127.0.0.1")
                == 404)
        let token = try #require(base.split(separator: "/").last)
        #expect(try await Self.status(url.replacingOccurrences(of: "/\(token)/", with: "/"), from: "127.0.0.1") == 404)
    }
}
