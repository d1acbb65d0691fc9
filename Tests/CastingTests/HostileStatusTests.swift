import CastModel
import CastSender
import Casting
import JSONSupport
import Testing

/// Device-reported values that once trapped `control` and `status` (`Int(1e300)`).
@Suite("the status line with absurd values from a device")
struct HostileStatusTests {
    func summary(currentTime: Double, duration: Double?, volume: Double) -> PlaybackSummary {
        var media = MediaInformation(contentID: "http://h/m.mp4", streamType: .buffered)
        media.duration = duration
        var status = MediaStatus()
        status.mediaSessionID = 1
        status.media = media
        status.playerState = .playing
        status.currentTime = currentTime
        let state = CastSenderState(
            connection: .connected, receiver: ReceiverStatus(volume: CastVolume(level: volume, muted: false)),
            session: nil, media: status)
        return PlaybackSummary(state: state, device: "TV")
    }

    @Test(
        "times and volumes no device can have are shown as –; the JSON keeps what the device said",
        arguments: [
            (1e300, 1e19, 1e17, "TV · PLAYING – / – · captions off · vol –"),
            (42, 1e19, .infinity, "TV · PLAYING 0:42 / – · captions off · vol –"),
            (.nan, 596, -0.5, "TV · PLAYING – / 9:56 · captions off · vol –"),
            // the longest clock shown
            (1e9 - 1, 1e9 - 1, 1, "TV · PLAYING 277777:46:39 / 277777:46:39 · captions off · vol 100%"),
        ] as [(Double, Double, Double, String)])
    func absurdValues(currentTime: Double, duration: Double, volume: Double, line: String) {
        let summary = summary(currentTime: currentTime, duration: duration, volume: volume)
        #expect(summary.line == line)
        #expect(summary.jsonValue["duration"]?.doubleValue == duration)
    }
}
