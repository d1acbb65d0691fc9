import CastModel
import CastReceiver
import JSONSupport
import Testing

@Suite("Default Media Receiver: LOAD and playback")
struct MediaTests {
    @Test("a valid LOAD goes IDLE+LOADING → BUFFERING → PLAYING, then FINISHED at the declared duration")
    func loadLifecycle() async throws {
        var harness = Harness()
        harness.holdsFetches = true
        let loading = await harness.launchAndLoad(duration: 60, senders: ["phone", "tablet"])
        // While the media is fetched: IDLE with extendedStatus LOADING, to every sender on the app.
        #expect(loading.broadcastStates == ["IDLE+LOADING", "IDLE+LOADING"])
        #expect(loading.replies.isEmpty, "the LOAD reply waits for the media")
        #expect(harness.heldFetches.map(\.media.contentID) == ["http://media.example/bbb.mp4"])
        #expect(harness.heldFetches.first?.origin == "https://www.gstatic.com")

        let loaded = await harness.releaseFetches()
        let reply = try #require(loaded.replies.first)
        #expect(reply.requestID == 2 && reply.sender == "phone")
        #expect(reply.mediaStatus?["playerState"] == "BUFFERING")
        #expect(loaded.broadcastStates == ["BUFFERING", "BUFFERING"])

        let playing = await harness.advance(by: 0.5)
        #expect(playing.broadcastStates == ["PLAYING", "PLAYING"])
        await harness.advance(by: 10)
        #expect(harness.status?.currentTime == 10)

        let finished = await harness.advance(by: 60)
        #expect(finished.broadcastStates == ["IDLE/FINISHED", "IDLE/FINISHED"])
        #expect(finished.broadcasts.first?.mediaStatus?["currentTime"]?.doubleValue == 60)
        #expect(finished.broadcasts.first?.mediaStatus?["loadingItemId"] == nil, "the queue is over")
        let afterwards = await harness.media(#"{"type":"GET_STATUS","requestId":9}"#)
        #expect(afterwards.replies.first?.payload["status"] == [], "no media session once it has finished")
    }

    @Test("playback ends at the probed duration when the fetch measured one")
    func probedDurationWins() async throws {
        let fetcher = ScriptedFetcher(["http://media.example/bbb.mp4": .available(duration: 12.5, notes: [])])
        var harness = Harness(fetcher: fetcher)
        await harness.launchAndLoad(duration: 596)
        await harness.advance(by: 0.5)
        #expect(harness.status?.media?.duration == 12.5, "devices report the duration they measured")
        let early = await harness.advance(by: 12)
        #expect(early.broadcastStates.isEmpty)
        let end = await harness.advance(by: 0.5)
        #expect(end.broadcastStates == ["IDLE/FINISHED"])
    }

    @Test("currentTime follows playbackRate, PAUSE and PLAY")
    func positionArithmetic() async throws {
        var harness = Harness()
        await harness.launchAndLoad(duration: 600)
        await harness.advance(by: 0.5)
        await harness.advance(by: 10)
        let session = try #require(harness.status?.mediaSessionID)
        let rate = await harness.media(
            #"{"type":"SET_PLAYBACK_RATE","requestId":3,"mediaSessionId":\#(session),"playbackRate":2}"#)
        #expect(rate.replies.first?.mediaStatus?["playbackRate"] == 2)
        await harness.advance(by: 5)
        #expect(harness.status?.currentTime == 20)
        let paused = await harness.media(#"{"type":"PAUSE","requestId":4,"mediaSessionId":\#(session)}"#)
        #expect(paused.replies.first?.mediaStatus?["playerState"] == "PAUSED")
        #expect(paused.broadcastStates == ["PAUSED"])
        await harness.advance(by: 100)
        #expect(harness.status?.currentTime == 20)
        await harness.media(#"{"type":"PLAY","requestId":5,"mediaSessionId":\#(session)}"#)
        await harness.media(
            #"{"type":"SET_PLAYBACK_RATE","requestId":6,"mediaSessionId":\#(session),"relativePlaybackRate":0.25}"#)
        await harness.advance(by: 4)
        #expect(harness.status?.playbackRate == 0.5)
        #expect(harness.status?.currentTime == 22)
    }

    @Test("SET_PLAYBACK_RATE outside 0.5–2 is INVALID_PARAMS", arguments: ["0", "-1", "4", "0.25"])
    func playbackRateRange(rate: String) async throws {
        var harness = Harness()
        await harness.launchAndLoad()
        let outputs = await harness.media(#"{"type":"SET_PLAYBACK_RATE","requestId":3,"playbackRate":\#(rate)}"#)
        #expect(
            outputs.messages.map(\.payload) == [
                ["type": "INVALID_REQUEST", "requestId": 3, "reason": "INVALID_PARAMS"]
            ])
    }

    @Test(
        "SEEK moves the position; resumeState decides the state afterwards",
        arguments: [
            (#""currentTime":30"#, "PLAYING", 30.0, "PLAYING"),
            (#""currentTime":30.0"#, "PLAYING", 30.0, "PLAYING"),  // integer and float times are the same
            (#""currentTime":30,"resumeState":"PLAYBACK_PAUSE""#, "PLAYING", 30.0, "PAUSED"),
            (#""currentTime":30,"resumeState":"PLAYBACK_START""#, "PAUSED", 30.0, "PLAYING"),
            // go-chromecast sends an empty resumeState
            (#""currentTime":30,"resumeState":"""#, "PAUSED", 30.0, "PAUSED"),
            (#""relativeTime":-5"#, "PLAYING", 5.0, "PLAYING"),
            (#""relativeTime":-50"#, "PLAYING", 0.0, "PLAYING"),
            (#""currentTime":9999"#, "PLAYING", 60.0, "PLAYING"),  // clamped to the end
        ])
    func seek(arguments: String, stateBefore: String, position: Double, stateAfter: String) async throws {
        var harness = Harness()
        await harness.launchAndLoad(duration: 60)
        await harness.advance(by: 0.5)
        await harness.advance(by: 10)
        if stateBefore == "PAUSED" { await harness.media(#"{"type":"PAUSE","requestId":3}"#) }
        let outputs = await harness.media(#"{"type":"SEEK","requestId":4,\#(arguments)}"#)
        let reply = try #require(outputs.replies.first?.mediaStatus)
        #expect(reply["currentTime"]?.doubleValue == position)
        #expect(reply["playerState"]?.stringValue == stateAfter)
    }

    @Test(
        "a mistyped member of a playback command is skipped, as a device reads it",
        arguments: [
            (#""relativeTime":"10","currentTime":30"#, 30.0),  // the string offset is not read; currentTime is
            (#""mediaSessionId":"1","currentTime":20"#, 20.0),  // an unreadable session id means the current one
        ])
    func seekMistyped(arguments: String, position: Double) async throws {
        var harness = Harness()
        await harness.launchAndLoad(duration: 60)
        await harness.advance(by: 0.5)
        let outputs = await harness.media(#"{"type":"SEEK","requestId":4,\#(arguments)}"#)
        #expect(outputs.replies.first?.mediaStatus?["currentTime"]?.doubleValue == position)
    }

    @Test(
        "a stream SET_VOLUME without a readable level or muted is INVALID_PARAMS",
        arguments: [
            #""volume":0.5"#, #""volume":{}"#, #""volume":{"level":"high"}"#,
        ])
    func streamVolumeInvalid(arguments: String) async throws {
        var harness = Harness()
        await harness.launchAndLoad()
        let outputs = await harness.media(#"{"type":"SET_VOLUME","requestId":3,\#(arguments)}"#)
        #expect(
            outputs.messages.map(\.payload) == [
                ["type": "INVALID_REQUEST", "requestId": 3, "reason": "INVALID_PARAMS"]
            ])
    }

    @Test("media STOP ends the session with IDLE / CANCELLED")
    func mediaStop() async throws {
        var harness = Harness()
        await harness.launchAndLoad()
        await harness.advance(by: 3)
        let outputs = await harness.media(#"{"type":"STOP","requestId":7,"mediaSessionId":1,"sessionId":"ignored"}"#)
        #expect(outputs.replies.first?.requestID == 7)
        #expect(outputs.replies.first?.mediaStatus?["idleReason"] == "CANCELLED")
        #expect(outputs.broadcastStates == ["IDLE/CANCELLED"])
        #expect(harness.device.mediaStatus == nil)
        #expect(harness.device.runningApp != nil, "media STOP keeps the app")
    }

    @Test("a LOAD over playing media interrupts it; a LOAD over a loading one cancels it")
    func loadReplacesLoad() async throws {
        var harness = Harness()
        await harness.launchAndLoad()
        await harness.advance(by: 2)
        #expect(harness.status?.mediaSessionID == 1)
        let second = await harness.media(
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/b.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":30}}"#
        )
        #expect(second.broadcastStates.prefix(2) == ["IDLE/INTERRUPTED", "IDLE+LOADING"])
        #expect(second.broadcasts.first?.mediaStatus?["mediaSessionId"] == 1)
        #expect(harness.status?.mediaSessionID == 2, "each LOAD gets a new mediaSessionId")

        harness.holdsFetches = true
        await harness.media(
            #"{"type":"LOAD","requestId":4,"media":{"contentId":"http://media.example/c.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":30}}"#
        )
        let third = await harness.media(
            #"{"type":"LOAD","requestId":5,"media":{"contentId":"http://media.example/d.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":30}}"#
        )
        #expect(third.replies.map(\.payload) == [["type": "LOAD_CANCELLED", "requestId": 4]])
        let done = await harness.releaseFetches()
        #expect(done.replies.map(\.requestID) == [5], "the stale fetch answer for LOAD 4 is ignored")
        #expect(harness.status?.media?.contentID == "http://media.example/d.mp4")
    }

    @Test(
        "LOADs that a device refuses outright are INVALID_REQUEST / INVALID_PARAMS",
        arguments: [
            #"{"type":"LOAD","requestId":3}"#,
            #"{"type":"LOAD","requestId":3,"media":"http://media.example/a.mp4"}"#,
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"STREAMING"}}"#,
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":3}}"#,
            #"{"type":"LOAD","requestId":3,"currentTime":-4,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}"#,
            #"{"type":"LOAD","requestId":3,"activeTrackIds":[7],"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}"#,
            #"{"type":"LOAD","requestId":3,"queueData":{"items":[{"itemId":1,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}]}}"#,
            #"{"type":"LOAD","requestId":3,"playbackRate":0,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}"#,
        ])
    func loadRejected(payload: String) async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let outputs = await harness.media(payload)
        #expect(
            outputs.messages.map(\.payload) == [
                ["type": "INVALID_REQUEST", "requestId": 3, "reason": "INVALID_PARAMS"]
            ])
        #expect(harness.device.mediaStatus == nil)
        #expect(harness.fetcher.requests.isEmpty)
        #expect(harness.log.contains { !$0.diagnostics.isEmpty }, "the log says why")
    }

    @Test(
        "LOADs with members devices do without play: null or missing streamType, customData, metadata, currentTime; contentType from the URL",
        arguments: [
            // catt: "streamType": null.
            #"{"type":"LOAD","requestId":3,"autoplay":true,"currentTime":0,"customData":{},"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":null,"metadata":{"metadataType":0,"title":"a"}}}"#,
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4"}}"#,
            #"{"type":"LOAD","requestId":3,"customData":null,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED","customData":null,"metadata":null}}"#,
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/a.mp4","streamType":"BUFFERED"}}"#,
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/a.m3u8","contentType":null}}"#,
        ])
    func loadTolerated(payload: String) async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let outputs = await harness.media(payload)
        #expect(outputs.replies.first?.mediaStatus?["playerState"] == "BUFFERING", "\(outputs.messages.map(\.payload))")
        #expect(
            outputs.replies.first?.mediaStatus?["media"]?["streamType"] == "BUFFERED",
            "a device reports what it plays as")
        #expect(harness.fetcher.requests.count == 1)
    }

    @Test("a LOAD without contentType whose URL has no known extension fails with 104, as there is no player to pick")
    func loadWithoutAnyType() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let outputs = await harness.media(
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/stream","streamType":"BUFFERED"}}"#
        )
        #expect(
            outputs.replies.map(\.payload) == [
                ["type": "LOAD_FAILED", "requestId": 3, "detailedErrorCode": 104, "itemId": 1]
            ])
        #expect(harness.fetcher.requests.isEmpty)
    }

    @Test(
        "LOADs whose media cannot play fail with LOAD_FAILED and the device's detailedErrorCode",
        arguments: [
            ("http://media.example/a.mkv", "video/x-matroska", 104),
            ("http://media.example/a.mp4", "text/html", 104),
            ("http://media.example/a.m3u8", "video/mp4", 104),  // the wrong player for an HLS playlist
            ("http://127.0.0.1/a.mp4", "video/mp4", 104),  // on a TV, 127.0.0.1 is the TV itself
            ("http://localhost/a.m3u8", "application/x-mpegurl", 311),
            ("http://127.0.0.1:8080/a.mpd", "application/dash+xml", 321),
            ("file:///movies/a.mp4", "video/mp4", 104),
        ])
    func loadFails(url: String, contentType: String, code: Int) async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver(senders: ["phone", "tablet"])
        let outputs = await harness.media(
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"\#(url)","contentType":"\#(contentType)","streamType":"BUFFERED","duration":10}}"#
        )
        #expect(
            outputs.replies.map(\.payload) == [
                ["type": "LOAD_FAILED", "requestId": 3, "detailedErrorCode": .number(JSONNumber(code)), "itemId": 1]
            ])
        #expect(outputs.broadcastStates == ["IDLE+LOADING", "IDLE+LOADING", "IDLE/ERROR", "IDLE/ERROR"])
        #expect(harness.fetcher.requests.isEmpty, "the device knows without fetching")
    }

    @Test("a fetch failure becomes LOAD_FAILED with the fetcher's code")
    func fetchFailure() async throws {
        let fetcher = ScriptedFetcher([
            "http://media.example/live.m3u8": .failed(
                code: .hlsNetworkPlaylist, reason: "no CORS on the media playlist", diagnostics: [])
        ])
        var harness = Harness(fetcher: fetcher)
        await harness.launchDefaultMediaReceiver()
        let outputs = await harness.media(
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/live.m3u8","contentType":"application/x-mpegurl","streamType":"LIVE"}}"#
        )
        #expect(outputs.replies.first?.payload["detailedErrorCode"] == 312)
        #expect(
            harness.log.contains {
                $0.note?.contains("312 HLS_NETWORK_PLAYLIST: no CORS on the media playlist") == true
            })
    }

    @Test("loopback media is fetched when the configuration says it is reachable")
    func loopbackReachable() async throws {
        var configuration = Harness.testConfiguration
        configuration.loopbackMediaIsReachable = true
        var harness = Harness(configuration: configuration)
        await harness.launchAndLoad("http://127.0.0.1:8000/a.mp4")
        #expect(harness.fetcher.requests == ["http://127.0.0.1:8000/a.mp4"])
        #expect(harness.status?.playerState == .buffering)
    }

    @Test("sender quirks are tolerated: pychromecast and go-chromecast LOADs, integer times, sessionId on commands")
    func senderQuirks() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let sessionID = harness.transportID
        // pychromecast: sessionId, customData {}, integer currentTime, a thumb key, subtitles on.
        let pychromecast = await harness.media(
            #"{"activeTrackIds":[1],"autoplay":true,"currentTime":0,"customData":{},"media":{"contentId":"http://192.168.1.20:8123/local/bbb.mp4","contentType":"video/mp4","metadata":{"metadataType":0,"thumb":"http://192.168.1.20:8123/local/bbb.jpg","title":"Big Buck Bunny"},"streamType":"BUFFERED","tracks":[{"language":"en-US","name":"en-US - 1 Subtitle","subtype":"SUBTITLES","trackContentId":"http://192.168.1.20:8123/local/bbb.en.vtt","trackContentType":"text/vtt","trackId":1,"type":"TEXT"}]},"requestId":3,"sessionId":"\#(sessionID)","type":"LOAD"}"#
        )
        #expect(pychromecast.replies.first?.mediaStatus?["activeTrackIds"] == [1])
        // go-chromecast: duration 0, queueData with only startIndex, customData null, PLAY with currentTime and "".
        let goChromecast = await harness.media(
            #"{"autoplay":true,"currentTime":0,"customData":null,"media":{"contentId":"http://192.168.1.5:34567/Sintel.mp4","contentType":"video/mp4","duration":0,"metadata":{"artist":"","metadataType":0,"releaseDate":"","subtitle":"","title":""},"streamType":"BUFFERED"},"queueData":{"startIndex":0},"requestId":12,"type":"LOAD"}"#
        )
        #expect(goChromecast.replies.first?.mediaStatus?["playerState"] == "BUFFERING")
        await harness.advance(by: 0.5)
        await harness.media(#"{"type":"PAUSE","requestId":13,"mediaSessionId":2,"currentTime":0,"resumeState":""}"#)
        let play = await harness.media(
            #"{"type":"PLAY","requestId":14.0,"mediaSessionId":2.0,"currentTime":0,"resumeState":"","sessionId":"\#(sessionID)"}"#
        )
        #expect(play.replies.first?.requestID == 14)
        #expect(play.replies.first?.mediaStatus?["playerState"] == "PLAYING")
        // A declared duration of 0 means "unknown": the item does not finish at once.
        let later = await harness.advance(by: 3600)
        #expect(later.broadcastStates.isEmpty)
        #expect(harness.status?.currentTime == 3600)
    }

    @Test("media commands without a session are INVALID_PLAYER_STATE; for an old session INVALID_MEDIA_SESSION_ID")
    func commandErrors() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let noSession = await harness.media(#"{"type":"PLAY","requestId":3,"mediaSessionId":1}"#)
        #expect(noSession.messages.map(\.payload) == [["type": "INVALID_PLAYER_STATE", "requestId": 3]])
        let status = await harness.media(#"{"type":"GET_STATUS","requestId":4}"#)
        #expect(status.messages.map(\.payload) == [["type": "MEDIA_STATUS", "requestId": 4, "status": []]])
        await harness.media(
            #"{"type":"LOAD","requestId":5,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":9}}"#
        )
        let stale = await harness.media(#"{"type":"PAUSE","requestId":6,"mediaSessionId":41}"#)
        #expect(
            stale.messages.map(\.payload) == [
                ["type": "INVALID_REQUEST", "requestId": 6, "reason": "INVALID_MEDIA_SESSION_ID"]
            ])
        let unknown = await harness.media(#"{"type":"SKIP_AD","requestId":7}"#)
        #expect(
            unknown.messages.map(\.payload) == [
                ["type": "INVALID_REQUEST", "requestId": 7, "reason": "INVALID_COMMAND"]
            ])
    }

    @Test("media messages reach the app only on its transport id, and only from connected senders")
    func mediaRouting() async throws {
        var harness = Harness()
        await harness.connect("phone")
        await harness.send(#"{"type":"LAUNCH","requestId":1,"appId":"CC1AD845"}"#)
        // Not yet connected to the transport id: dropped.
        let dropped = await harness.media(#"{"type":"GET_STATUS","requestId":2}"#)
        #expect(dropped.isEmpty)
        // The media namespace sent to receiver-0 is not the app.
        let wrongEndpoint = await harness.send(#"{"type":"GET_STATUS","requestId":3}"#, namespace: .media)
        #expect(wrongEndpoint.isEmpty)
        await harness.connect("phone", to: harness.transportID)
        let answered = await harness.media(#"{"type":"GET_STATUS","requestId":4}"#)
        #expect(answered.messages.first?.sourceID == harness.transportID)
    }

    @Test("stream SET_VOLUME changes the media volume, not the device's")
    func streamVolume() async throws {
        var harness = Harness()
        await harness.launchAndLoad()
        let outputs = await harness.media(
            #"{"type":"SET_VOLUME","requestId":3,"mediaSessionId":1,"volume":{"level":0.4,"muted":true}}"#)
        #expect(outputs.replies.first?.mediaStatus?["volume"] == ["level": 0.4, "muted": true])
        #expect(outputs.broadcasts.count == 1)
        #expect(harness.device.volume.level == 1)
        let invalid = await harness.media(#"{"type":"SET_VOLUME","requestId":4,"volume":{}}"#)
        #expect(invalid.messages.first?.payload["reason"] == "INVALID_PARAMS")
    }

    @Test("live streams cannot SEEK, do not advertise it, and never finish")
    func liveStream() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        await harness.media(
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/live.m3u8","contentType":"application/x-mpegurl","streamType":"LIVE","duration":-1}}"#
        )
        await harness.advance(by: 0.5)
        #expect(harness.status?.supportedMediaCommands == MediaCommands.allBasicMedia.subtracting(.seek))
        let seek = await harness.media(#"{"type":"SEEK","requestId":4,"currentTime":10}"#)
        #expect(seek.messages.first?.payload["reason"] == "NOT_SUPPORTED")
        let hours = await harness.advance(by: 10_000)
        #expect(hours.broadcastStates.isEmpty)
    }

    @Test("supportedMediaCommands: 12303 for one item, queue commands added for a queue")
    func supportedCommands() async throws {
        var harness = Harness()
        await harness.launchAndLoad()
        #expect(harness.status?.supportedMediaCommands?.rawValue == 12303)
        await harness.media(
            #"{"type":"QUEUE_INSERT","requestId":3,"mediaSessionId":1,"items":[{"media":{"contentId":"http://media.example/b.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}]}"#
        )
        #expect(harness.status?.supportedMediaCommands?.rawValue == 12303 | 64 | 128 | 256 | 1024 | 2048)
    }

    @Test("autoplay false loads and pauses; PLAY starts it")
    func autoplayFalse() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        await harness.media(
            #"{"type":"LOAD","requestId":3,"autoplay":false,"currentTime":5,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":20}}"#
        )
        let ready = await harness.advance(by: 0.5)
        #expect(ready.broadcastStates == ["PAUSED"])
        #expect(harness.status?.currentTime == 5)
        await harness.media(#"{"type":"PLAY","requestId":4}"#)
        await harness.advance(by: 2)
        #expect(harness.status?.currentTime == 7)
    }
}

@Suite("Default Media Receiver: EDIT_TRACKS_INFO")
struct TrackTests {
    static let loadWithTracks =
        #"{"type":"LOAD","requestId":2,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":100,"tracks":[{"trackId":1,"type":"TEXT","subtype":"SUBTITLES","trackContentId":"http://media.example/a.en.vtt","trackContentType":"text/vtt","language":"en-US"},{"trackId":2,"type":"TEXT","subtype":"SUBTITLES","trackContentId":"http://media.example/a.fr.vtt","trackContentType":"text/vtt","language":"fr"},{"trackId":3,"type":"AUDIO","language":"en"}]}}"#

    func loaded() async -> Harness {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        await harness.media(Self.loadWithTracks)
        await harness.advance(by: 0.5)
        return harness
    }

    @Test(
        "EDIT_TRACKS_INFO switches tracks by id, by language, or turns text off",
        arguments: [
            (#""activeTrackIds":[1]"#, [1]),
            (#""activeTrackIds":[2,3]"#, [2, 3]),
            (#""activeTrackIds":[]"#, []),
            (#""language":"fr""#, [2]),
            (#""language":"en""#, [1]),
            (#""enableTextTracks":true"#, [1]),
        ])
    func switchTracks(arguments: String, active: [Int]) async throws {
        var harness = await loaded()
        let outputs = await harness.media(
            #"{"type":"EDIT_TRACKS_INFO","requestId":5,"mediaSessionId":1,\#(arguments)}"#)
        #expect(outputs.replies.first?.mediaStatus?["activeTrackIds"] == .array(active.map { JSONValue($0) }))
        #expect(outputs.broadcasts.count == 1)
    }

    @Test("enableTextTracks false keeps audio tracks and drops text")
    func disableText() async throws {
        var harness = await loaded()
        await harness.media(#"{"type":"EDIT_TRACKS_INFO","requestId":5,"activeTrackIds":[1,3]}"#)
        let outputs = await harness.media(#"{"type":"EDIT_TRACKS_INFO","requestId":6,"enableTextTracks":false}"#)
        #expect(outputs.replies.first?.mediaStatus?["activeTrackIds"] == [3])
    }

    @Test(
        "unknown track ids are INVALID_PARAMS, an unknown language LANGUAGE_NOT_SUPPORTED",
        arguments: [
            (#""activeTrackIds":[9]"#, "INVALID_PARAMS"), (#""language":"de""#, "LANGUAGE_NOT_SUPPORTED"),
        ])
    func editErrors(arguments: String, reason: String) async throws {
        var harness = await loaded()
        let outputs = await harness.media(#"{"type":"EDIT_TRACKS_INFO","requestId":5,\#(arguments)}"#)
        #expect(
            outputs.messages.map(\.payload) == [["type": "INVALID_REQUEST", "requestId": 5, "reason": .string(reason)]])
    }

    @Test("textTrackStyle is applied to the media in MEDIA_STATUS; a bad colour is accepted and logged")
    func style() async throws {
        var harness = await loaded()
        let outputs = await harness.media(
            ##"{"type":"EDIT_TRACKS_INFO","requestId":5,"textTrackStyle":{"foregroundColor":"#FFFF00FF","edgeType":"OUTLINE","edgeColor":"black","fontScale":1.5}}"##
        )
        let style = outputs.replies.first?.mediaStatus?["media"]?["textTrackStyle"]
        #expect(style?["foregroundColor"] == "#FFFF00FF")
        #expect(style?["fontScale"] == 1.5)
        #expect(harness.log.contains { $0.diagnostics.contains { $0.code == "style.color-format" } })
    }
}
