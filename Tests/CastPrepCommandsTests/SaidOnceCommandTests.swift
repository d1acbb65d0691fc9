import Foundation
import Testing
import TestSupport

@Suite("castprep probe says each verdict once", .serialized)
struct ProbeGroupingTests {
    /// The "devices:" block and the fix lines after it.
    private func verdictBlock(_ output: String) -> [String] {
        let lines = output.split(separator: "\n").map(String.init)
        guard let start = lines.firstIndex(of: "  devices:") else { return [] }
        return Array(lines[start...])
    }

    @Test("HEVC: the four devices that cannot decode it share one entry and one fix")
    func sameVerdictGrouped() async {
        let result = await castprep("probe", "Samples/hevc-aac.mp4")
        #expect(result.status == 0)
        let fix =
            "ffmpeg -i Samples/hevc-aac.mp4 -map 0 -c copy -c:v libx264 -profile:v high -pix_fmt yuv420p -crf 20 -preset medium -movflags +faststart Samples/hevc-aac.cast.mp4"
        #expect(
            verdictBlock(result.output) == [
                "  devices:",
                "    WILL NOT PLAY   Chromecast (1st and 2nd gen), Chromecast (3rd gen), Google Nest Hub, Google Nest Hub Max",
                "      - the device does not decode HEVC video",
                "    plays           Chromecast Ultra, Chromecast with Google TV (HD), Chromecast with Google TV (4K), Google TV Streamer",
                "    plays, caveats  Audio devices (Nest Audio, Nest Mini, Google Home, speaker groups)",
                "      - the device has no screen: only the audio plays",
                "  fix: \(fix)",
            ])
    }

    @Test("5.1 AAC: different reasons stay apart, the one fix they share is printed once")
    func sharedFixOnce() async {
        let result = await castprep("probe", "Samples/h264-aac51.mp4")
        #expect(result.status == 0)
        let block = verdictBlock(result.output)
        #expect(block.filter { $0.contains("ffmpeg -i") }.count == 1)
        #expect(block.last?.hasPrefix("  fix: ffmpeg -i Samples/h264-aac51.mp4") == true)
        #expect(block.contains("    WILL NOT PLAY   Chromecast (1st and 2nd gen), Chromecast Ultra"))
        #expect(block.contains("    WILL NOT PLAY   Google Nest Hub, Google Nest Hub Max"))
        #expect(
            block.contains(
                "    plays, caveats  Chromecast (3rd gen), Chromecast with Google TV (HD), Chromecast with Google TV (4K), Google TV Streamer"
            ))
    }

    @Test("one device alone keeps its own name in the reason")
    func singleDevice() async {
        let result = await castprep("probe", "Samples/hevc-aac.mp4", "--devices", "nest-hub")
        #expect(verdictBlock(result.output).contains("      - Google Nest Hub does not decode HEVC video"))
    }

    @Test(
        "devices needing different fixes: each fix once, naming its devices",
        .requires(.ffmpeg))
    func differentFixes() async throws {
        let directory = try TemporaryFolder.create("probe-groups")
        defer { TemporaryFolder.remove(directory) }
        let file = directory.appendingPathComponent("hevc-1080.mp4").path
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = [
            "-v", "error", "-f", "lavfi", "-i", "color=size=1920x1080:rate=24:duration=0.1", "-c:v", "libx265",
            "-x265-params", "log-level=error", "-tag:v", "hvc1", "-y", file,
        ]
        ffmpeg.standardInput = FileHandle.nullDevice
        try await ChildProcess.run(ffmpeg)
        try #require(ffmpeg.terminationStatus == 0)

        let result = await castprep("probe", file, "--devices", "chromecast-gen3,nest-hub,nest-hub-max")
        let block = verdictBlock(result.output)
        let fixes = block.filter { $0.hasPrefix("  fix") }
        #expect(fixes.count == 2, "\(block)")
        #expect(fixes.first?.hasPrefix("  fix for Chromecast (3rd gen): ffmpeg ") == true)
        #expect(fixes.last?.hasPrefix("  fix for Google Nest Hub, Google Nest Hub Max: ffmpeg ") == true)
        #expect(fixes.last?.contains("scale") == true)
    }
}
