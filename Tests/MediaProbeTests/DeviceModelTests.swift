import CastModel
import MediaProbe
import Testing

/// Which profiles a device's model name means, and the verdict `castprep cast` acts on.
@Suite("device model names")
struct DeviceModelTests {
    @Test(
        "model names map to the profiles they can mean",
        arguments: [
            // one name for four devices
            ("Chromecast", ["chromecast-gen1-2", "chromecast-gen3", "google-tv-hd", "google-tv-4k"]),
            ("Chromecast Ultra", ["chromecast-ultra"]), ("chromecast  ultra", ["chromecast-ultra"]),
            ("Google TV Streamer", ["google-tv-streamer"]),
            ("Google Nest Hub", ["nest-hub"]), ("Google Nest Hub Max", ["nest-hub-max"]),
            ("Google Home Mini", ["audio"]),
            ("Google Cast Group", ["audio"]), ("Chromecast (3rd gen)", ["chromecast-gen3"]),
            ("chromecast-gen1-2", ["chromecast-gen1-2"]),
        ])
    func mapping(model: String, ids: [String]) throws {
        let match = try #require(DeviceModelMatch(model: model))
        #expect(match.candidates.map(\.id) == ids)
    }

    @Test("an unknown model means no profile", arguments: ["", "SHIELD Android TV", "BRAVIA 4K GB", "Chromecast Max"])
    func unknown(model: String) {
        #expect(DeviceModelMatch(model: model) == nil)
    }

    @Test("High 10 plays on none: refused with the fix; HEVC only where a candidate decodes it")
    func verdicts() throws {
        let high10 = try MediaProber().probeBlocking(path: samplePath("h264-high10.mp4"))
        let shared = try #require(DeviceModelMatch(model: "Chromecast"))
        let verdict = shared.verdict(for: high10)
        #expect(verdict.outcome == .willNotPlay)
        #expect(verdict.reasons.contains { $0.code == "device.h264-high10" && $0.fix?.hasPrefix("ffmpeg ") == true })

        let hevc = try MediaProber().probeBlocking(path: samplePath("hevc-aac.mp4"))
        #expect(
            try #require(DeviceModelMatch(model: "Chromecast (3rd gen)")).verdict(for: hevc).outcome == .willNotPlay)
        #expect(try #require(DeviceModelMatch(model: "Chromecast Ultra")).verdict(for: hevc).outcome != .willNotPlay)
        // "Chromecast" may be a Chromecast with Google TV, which decodes HEVC: not refused.
        #expect(shared.verdict(for: hevc).outcome != .willNotPlay)

        let plain = try MediaProber().probeBlocking(path: samplePath("h264-aac-faststart.mp4"))
        #expect(shared.verdict(for: plain).outcome != .willNotPlay)
    }
}
