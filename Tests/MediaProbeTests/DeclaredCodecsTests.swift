import CastModel
import MediaProbe
import Testing

/// Judging a LOAD's declared codecs, and which profile a model name means.
@Suite("Declared codecs and model names")
struct DeclaredCodecsTests {
    @Test(
        "the codecs parameter is judged on the device as a probe would be",
        arguments: [
            // High 10
            (#"video/mp4; codecs="avc1.6E0028, mp4a.40.2""#, "chromecast-gen3", DeviceVerdict.Outcome.willNotPlay),
            (#"video/mp4; codecs="avc1.640028, mp4a.40.2""#, "chromecast-gen3", .plays),  // High 4.0
            (#"video/mp4; codecs="avc1.640033""#, "chromecast-gen3", .willNotPlay),  // level 5.1
            (#"video/mp4; codecs="hvc1.1.6.L60.90, mp4a.40.2""#, "chromecast-gen3", .willNotPlay),
            (#"video/mp4; codecs="hvc1.1.6.L60.90, mp4a.40.2""#, "chromecast-ultra", .plays),
            (#"video/webm; codecs="vp09.00.40.08, opus""#, "google-tv-4k", .plays),
            (#"video/mp4; codecs="av01.0.08M.08""#, "chromecast-ultra", .willNotPlay),
        ])
    func declared(contentType: String, profile: String, outcome: DeviceVerdict.Outcome) throws {
        let device = try #require(DeviceProfile.all.first { $0.id == profile })
        #expect(
            DeclaredCodecs.verdict(for: contentType, source: "http://media.example/a", on: device)?.outcome == outcome)
    }

    @Test(
        "a contentType without codecs, or with unknown ones, gives no verdict",
        arguments: ["video/mp4", #"video/mp4; codecs="xyz1.2""#])
    func nothingDeclared(contentType: String) {
        #expect(DeclaredCodecs.verdict(for: contentType, source: "a", on: DeviceProfile.strictest) == nil)
    }

    @Test(
        "model names map to profiles; unknown names to none",
        arguments: [
            ("Chromecast", "chromecast-gen3"), ("Chromecast Ultra", "chromecast-ultra"), ("google nest mini", "audio"),
            ("chromecast-gen1-2", "chromecast-gen1-2"), ("Google TV Streamer", "google-tv-streamer"),
        ])
    func models(model: String, profile: String) {
        #expect(DeviceProfile.matching(model: model)?.id == profile)
        #expect(DeviceProfile.matching(model: "Acme Stick") == nil)
    }
}
