import CastModel
import Foundation
import JSONSupport
import NowPlaying
import Testing

/// A MEDIA_STATUS entry as a device sends it.
func mediaStatus(_ json: String) throws -> MediaStatus {
    let value = try JSONParser().parse(json).value
    var diagnostics: [Diagnostic] = []
    return try #require(MediaStatus.decode(from: value, at: .root, diagnostics: &diagnostics))
}

/// pause | seek | stream volume | stream mute | queue next | queue prev (1 + 2 + 4 + 8 + 64 + 128).
let queueCommands = 207

@Suite("MPRIS state from MEDIA_STATUS")
struct MPRISStateTests {
    static let playing = """
        {"mediaSessionId": 3, "playerState": "PLAYING", "currentTime": 42.5, "playbackRate": 1, "supportedMediaCommands": \(queueCommands),
         "currentItemId": 11, "repeatMode": "REPEAT_OFF",
         "items": [{"itemId": 10, "media": {"contentId": "a.mp3"}}, {"itemId": 11, "media": {"contentId": "b.mp3"}}, {"itemId": 12, "media": {"contentId": "c.mp3"}}],
         "media": {"contentId": "b.mp3", "streamType": "BUFFERED", "duration": 596.5,
                   "metadata": {"metadataType": 3, "title": "Second Song", "artist": "The Band", "albumName": "Album",
                                "images": [{"url": "https://example.com/cover.jpg"}]}}}
        """

    @Test("a playing queue item: status, metadata in µs, Can* from supportedMediaCommands")
    func playingItem() throws {
        let state = MPRISState(
            device: "Kitchen", media: try mediaStatus(Self.playing), volume: CastVolume(level: 0.4, muted: false))
        #expect(state.identity == "Kitchen")
        #expect(state.playbackStatus == "Playing")
        #expect(state.trackID == "/org/castprep/session/3/item/11")
        #expect(state.lengthMicroseconds == 596_500_000)
        #expect(state.positionMicroseconds == 42_500_000)
        #expect(state.volume == 0.4)
        #expect(
            state.metadata == [
                "mpris:trackid": .objectPath("/org/castprep/session/3/item/11"), "mpris:length": .int64(596_500_000),
                "xesam:title": .string("Second Song"), "xesam:artist": .stringArray(["The Band"]),
                "xesam:album": .string("Album"),
                "mpris:artUrl": .string("https://example.com/cover.jpg"),
            ])
        #expect(
            [state.canPlay, state.canPause, state.canSeek, state.canGoNext, state.canGoPrevious, state.canControl] == [
                true, true, true, true, true, true,
            ])
    }

    @Test(
        "Can* follow supportedMediaCommands and the queue",
        arguments: [
            // (commands, current item, repeat) → (canPause, canSeek, canGoNext, canGoPrevious)
            (0, 11, "REPEAT_OFF", [false, false, false, false]),
            (1, 11, "REPEAT_OFF", [true, false, false, false]),
            (2, 11, "REPEAT_OFF", [false, true, false, false]),
            (queueCommands, 10, "REPEAT_OFF", [true, true, true, false]),  // first item: nothing before it
            (queueCommands, 12, "REPEAT_OFF", [true, true, false, true]),  // last item: nothing after it
            (queueCommands, 12, "REPEAT_ALL", [true, true, true, true]),  // repeating: the queue wraps
            (64 + 128, 11, "REPEAT_OFF", [false, false, true, true]),
        ])
    func capabilities(commands: Int, current: Int, repeatMode: String, expected: [Bool]) throws {
        let json = Self.playing.replacingOccurrences(
            of: "\"supportedMediaCommands\": \(queueCommands)", with: "\"supportedMediaCommands\": \(commands)"
        )
        .replacingOccurrences(of: "\"currentItemId\": 11", with: "\"currentItemId\": \(current)")
        .replacingOccurrences(of: "REPEAT_OFF", with: repeatMode)
        let state = MPRISState(device: "Kitchen", media: try mediaStatus(json), volume: nil)
        #expect([state.canPause, state.canSeek, state.canGoNext, state.canGoPrevious] == expected)
    }

    @Test(
        "player states map to PlaybackStatus",
        arguments: [
            ("PLAYING", "Playing"), ("BUFFERING", "Playing"), ("PAUSED", "Paused"), ("IDLE", "Stopped"),
            ("SOMETHING_NEW", "Stopped"),
        ])
    func playbackStatus(playerState: String, expected: String) throws {
        let status = try mediaStatus(
            #"{"mediaSessionId": 1, "playerState": "\#(playerState)", "supportedMediaCommands": 15}"#)
        #expect(MPRISState(device: "d", media: status, volume: nil).playbackStatus == expected)
    }

    @Test("no media session: Stopped, NoTrack, nothing to control but the device volume")
    func noSession() {
        let state = MPRISState(device: "TV", media: nil, volume: CastVolume(level: 0.7, muted: true))
        #expect(state.playbackStatus == "Stopped")
        #expect(state.trackID == MPRISState.noTrack)
        #expect(state.metadata == ["mpris:trackid": .objectPath(MPRISState.noTrack)])
        #expect(state.volume == 0)  // muted
        #expect(!state.canControl && !state.canPlay && !state.canPause && !state.canSeek)
    }

    @Test("a live stream has no length and cannot seek")
    func live() throws {
        let status = try mediaStatus(
            """
            {"mediaSessionId": 2, "playerState": "PLAYING", "currentTime": 10, "supportedMediaCommands": 15,
             "media": {"contentId": "live.m3u8", "streamType": "LIVE", "duration": -1}}
            """)
        let state = MPRISState(device: "TV", media: status, volume: nil)
        #expect(state.lengthMicroseconds == nil)
        #expect(state.metadata["mpris:length"] == nil)
        #expect(!state.canSeek && state.canPause)
    }

    @Test(
        "seconds ↔ µs",
        arguments: [
            (0.0, Int64(0) as Int64?), (1.5, 1_500_000), (596.123456, 596_123_456), (-1, nil), (.infinity, nil),
            (.nan, nil), (1e300, nil),
        ])
    func microseconds(seconds: Double, expected: Int64?) {
        #expect(MPRISState.microseconds(seconds) == expected)
        if let expected { #expect(MPRISState.seconds(expected) == (seconds * 1e6).rounded() / 1e6) }
    }

    @Test("values from the network are clamped: rate, volume, position past the end")
    func clamped() throws {
        let status = try mediaStatus(
            """
            {"mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 900, "playbackRate": 16, "supportedMediaCommands": 15,
             "media": {"contentId": "a.mp4", "duration": 60}}
            """)
        let state = MPRISState(device: "d", media: status, volume: CastVolume(level: 7))
        #expect(state.rate == MPRISState.maximumRate)
        #expect(state.volume == 1)
        #expect(state.positionMicroseconds == 60_000_000)
    }

    @Test("the position moves with the clock while playing, at the rate, up to the length")
    func position() throws {
        let status = try mediaStatus(
            """
            {"mediaSessionId": 1, "playerState": "PLAYING", "currentTime": 10, "playbackRate": 2, "supportedMediaCommands": 15,
             "media": {"contentId": "a.mp4", "duration": 30}}
            """)
        let state = MPRISState(device: "d", media: status, volume: nil)
        #expect(state.position(after: .milliseconds(1500)) == 13_000_000)
        #expect(state.position(after: .seconds(60)) == 30_000_000)
        var paused = state
        paused.playbackStatus = "Paused"
        #expect(paused.position(after: .seconds(5)) == 10_000_000)
    }

    @Test("a jump is a Seeked; playing on is not; another item is a new track, not a seek")
    func jumps() throws {
        let before = MPRISState(device: "d", media: try mediaStatus(Self.playing), volume: nil)
        var later = before
        later.positionMicroseconds += 2_000_000
        #expect(!later.isJump(from: before, elapsed: .seconds(2)))
        var seeked = before
        seeked.positionMicroseconds = 300_000_000
        #expect(seeked.isJump(from: before, elapsed: .seconds(2)))
        var otherItem = seeked
        otherItem.trackID = "/org/castprep/session/3/item/12"
        #expect(!otherItem.isJump(from: before, elapsed: .seconds(2)))
    }

    @Test("PropertiesChanged carries what changed, never Position")
    func changes() throws {
        let playing = MPRISState(device: "d", media: try mediaStatus(Self.playing), volume: CastVolume(level: 0.5))
        var paused = playing
        paused.playbackStatus = "Paused"
        paused.positionMicroseconds += 5_000_000
        #expect(MPRISState.changedPlayerProperties(from: playing, to: paused) == ["PlaybackStatus": .string("Paused")])
        var louder = playing
        louder.volume = 0.8
        #expect(MPRISState.changedPlayerProperties(from: playing, to: louder) == ["Volume": .double(0.8)])
        let first = MPRISState.changedPlayerProperties(from: nil, to: playing)
        #expect(first["Position"] == nil && first["Metadata"] != nil && first["CanSeek"] == .bool(true))
    }

    @Test("root properties: no quit, no raise, no track list")
    func root() {
        let properties = MPRISState(device: "Living Room", media: nil, volume: nil).rootProperties
        #expect(properties["Identity"] == .string("Living Room"))
        #expect(
            properties["CanQuit"] == .bool(false) && properties["CanRaise"] == .bool(false)
                && properties["HasTrackList"] == .bool(false))
        #expect(properties["SupportedUriSchemes"] == .stringArray(["http", "https"]))
    }
}

@Suite("MPRIS bus names")
struct MPRISBusNameTests {
    @Test(
        "device names become one bus name element",
        arguments: [
            ("Living Room TV", "Living_Room_TV"), ("Küche", "K_che"), ("4K TV", "_4K_TV"), ("", "device"),
            ("!!!", "device"),
            ("a.b-c", "a_b_c"), ("  spaced  ", "spaced"),
            (String(repeating: "x", count: 300), String(repeating: "x", count: 64)),
        ])
    func element(name: String, expected: String) {
        #expect(MPRISBusName.element(for: name) == expected)
    }

    @Test("two devices with one name get distinct names")
    func distinct() {
        let first = MPRISBusName.busName(for: "TV", taken: [])
        #expect(first == "org.mpris.MediaPlayer2.castprep.TV")
        #expect(MPRISBusName.busName(for: "TV", taken: [first]) == "org.mpris.MediaPlayer2.castprep.TV_2")
    }
}
