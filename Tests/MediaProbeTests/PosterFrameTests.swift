import CastModel
import MediaProbe
import Testing

@Suite("Poster frames")
struct PosterFrameTests {
    @Test(
        "a JPEG is made from each kind of video",
        arguments: ["h264-aac-faststart.mp4", "hevc-aac.mp4", "vp9-opus.webm", "h264-high10.mp4", "subs-srt-ass.mkv"])
    func jpeg(name: String) throws {
        let bytes = try PosterFrame().jpeg(from: samplePath(name))
        #expect(bytes.starts(with: [0xFF, 0xD8, 0xFF]))  // SOI + a marker
        #expect(Array(bytes.suffix(2)) == [0xFF, 0xD9])  // EOI
        #expect(bytes.count > 1_000)
    }

    @Test("wide frames are scaled down to the maximum width, keeping even dimensions")
    func scaled() throws {
        let bytes = try PosterFrame(maximumWidth: 100).jpeg(from: samplePath("h264-aac-faststart.mp4"))
        // Read the frame size from the SOF0 marker (FF C0): height and width follow the length and precision.
        let index = try #require(
            bytes.indices.first { $0 + 8 < bytes.count && bytes[$0] == 0xFF && bytes[$0 + 1] == 0xC0 })
        let height = Int(bytes[index + 5]) << 8 | Int(bytes[index + 6])
        let width = Int(bytes[index + 7]) << 8 | Int(bytes[index + 8])
        #expect(width == 100)
        #expect(height == 56)
    }

    @Test("audio-only files have no poster")
    func audio() {
        #expect(throws: ProbeError.self) { try PosterFrame().jpeg(from: samplePath("tone.mp3")) }
    }
}
