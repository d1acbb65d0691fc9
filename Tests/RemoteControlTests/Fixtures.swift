import CastModel
import JSONSupport
import RemoteControl

/// Device states the controller tests draw: a queue of three items playing the second, with
/// text and audio tracks, at 40% volume.
enum Fixtures {
    static let mediaStatusJSON = #"""
        {"mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 42.5, "playbackRate": 1, "activeTrackIds": [1, 10],
         "currentItemId": 2, "repeatMode": "REPEAT_OFF",
         "items": [
           {"itemId": 1, "media": {"contentId": "http://127.0.0.1/media/intro.mp4", "contentType": "video/mp4", "streamType": "BUFFERED", "duration": 30,
            "metadata": {"metadataType": 0, "title": "Intro"}}},
           {"itemId": 2, "media": {"contentId": "http://127.0.0.1/media/bbb.mp4", "contentType": "video/mp4", "streamType": "BUFFERED", "duration": 596,
            "metadata": {"metadataType": 1, "title": "Big Buck Bunny", "subtitle": "Blender Foundation, 2008"},
            "tracks": [
              {"trackId": 1, "type": "TEXT", "subtype": "SUBTITLES", "language": "en", "name": "English"},
              {"trackId": 2, "type": "TEXT", "subtype": "SUBTITLES", "language": "fr", "name": "Français"},
              {"trackId": 10, "type": "AUDIO", "language": "en", "name": "Stereo"},
              {"trackId": 11, "type": "AUDIO", "language": "de", "name": "Deutsch"}]}},
           {"itemId": 3, "media": {"contentId": "http://127.0.0.1/media/sintel.mp4", "contentType": "video/mp4", "streamType": "BUFFERED", "duration": 888,
            "metadata": {"metadataType": 1, "title": "Sintel"}}}
         ]}
        """#

    static var mediaStatus: MediaStatus {
        var diagnostics: [Diagnostic] = []
        // swift-format-ignore: NeverForceUnwrap
        let json = try! JSONParser().parse(mediaStatusJSON).value
        // swift-format-ignore: NeverForceUnwrap
        return MediaStatus.decode(from: json, at: .root, diagnostics: &diagnostics)!
    }

    static func snapshot(playerState: PlayerState = .playing, muted: Bool = false) -> RemoteSnapshot {
        var media = mediaStatus
        media.playerState = playerState
        return RemoteSnapshot(
            device: "Living Room TV", app: "Default Media Receiver", link: .connected, media: media,
            volume: CastVolume(level: 0.4, muted: muted, stepInterval: 0.05), mediaReceivedAt: 100)
    }
}
