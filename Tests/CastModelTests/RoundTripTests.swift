import Foundation
import Testing

@testable import CastModel
@testable import JSONSupport

/// Decodes `text` as `T`, returning the value and the findings of decoding.
func decode<T: CastJSONConvertible>(
    _ type: T.Type, _ text: String, sourceLocation: SourceLocation = #_sourceLocation
) throws -> (value: T, json: JSONValue, diagnostics: [Diagnostic]) {
    let json = try parseJSON(text, sourceLocation: sourceLocation)
    var diagnostics: [Diagnostic] = []
    let decoded = T.decode(from: json, at: .root, diagnostics: &diagnostics)
    let value = try #require(decoded, sourceLocation: sourceLocation)
    return (value, json, diagnostics)
}

/// Realistic messages as real senders and devices write them.
enum WireSamples {
    /// pychromecast `play_media` with subtitles: `sessionId`, `customData: {}`, integer currentTime, a `thumb` key.
    static let pychromecastLoad =
        ##"{"activeTrackIds":[1],"autoplay":true,"currentTime":0,"customData":{},"media":{"contentId":"http://192.168.1.20:8123/local/bbb.mp4","contentType":"video/mp4","metadata":{"images":[{"url":"http://192.168.1.20:8123/local/bbb.jpg"}],"metadataType":0,"thumb":"http://192.168.1.20:8123/local/bbb.jpg","title":"Big Buck Bunny"},"streamType":"BUFFERED","textTrackStyle":{"backgroundColor":"#FFFFFF00","edgeColor":"#000000FF","edgeType":"OUTLINE"},"tracks":[{"language":"en-US","name":"en-US - 1 Subtitle","subtype":"SUBTITLES","trackContentId":"http://192.168.1.20:8123/local/bbb.en.vtt","trackContentType":"text/vtt","trackId":1,"type":"TEXT"}]},"requestId":3,"sessionId":"f4327fa9-ae8b-4f1a-8ba6-a1cd0fd7f3d7","type":"LOAD"}"##

    /// go-chromecast `load`: queueData with only startIndex, `customData: null`, integer currentTime,
    /// duration 0 and empty metadata strings.
    static let goChromecastLoad =
        #"{"autoplay":true,"currentTime":0,"customData":null,"media":{"contentId":"http://192.168.1.5:34567/Sintel.mp4","contentType":"video/mp4","duration":0,"metadata":{"artist":"","metadataType":0,"releaseDate":"","subtitle":"","title":""},"streamType":"BUFFERED"},"queueData":{"startIndex":0},"requestId":12,"type":"LOAD"}"#

    /// A LOAD that sets every modelled field of MediaInformation and its parts, plus queue data.
    static let fullLoad = #"""
        {
          "type": "LOAD",
          "requestId": 42,
          "sessionId": "9d8c7b6a-1234-4f00-9abc-0123456789ab",
          "autoplay": false,
          "currentTime": 12.5,
          "activeTrackIds": [1, 3],
          "playbackRate": 1.25,
          "credentials": "user-token-abc",
          "credentialsType": "web",
          "loadOptions": {"contentFilteringMode": "FILTER_EXPLICIT"},
          "customData": {"analytics": {"sessionTag": "abc", "sample": 0.10, "flags": [true, false, null]}, "big": 12345678901234567890},
          "media": {
            "contentId": "sintel-2010",
            "contentUrl": "https://media.example.com/films/sintel/master.m3u8",
            "contentType": "application/x-mpegurl",
            "streamType": "BUFFERED",
            "duration": 888.0416,
            "entity": "https://example.com/watch/sintel",
            "hlsSegmentFormat": "ts",
            "hlsVideoSegmentFormat": "mpeg2_ts",
            "mediaCategory": "VIDEO",
            "startAbsoluteTime": 1285545600,
            "userActionStates": [{"userAction": "LIKE"}],
            "metadata": {
              "metadataType": 1,
              "title": "Sintel",
              "subtitle": "A Blender Open Movie",
              "studio": "Blender Foundation",
              "releaseDate": "2010-09-27",
              "releaseYear": 2010,
              "images": [
                {"url": "https://media.example.com/films/sintel/poster.jpg", "width": 480, "height": 270},
                {"url": "https://media.example.com/films/sintel/poster-hd.jpg"}
              ]
            },
            "tracks": [
              {"trackId": 1, "type": "TEXT", "subtype": "SUBTITLES", "language": "en", "name": "English",
               "trackContentId": "https://media.example.com/films/sintel/en.vtt", "trackContentType": "text/vtt",
               "roles": ["main"], "customData": {"source": "opensubtitles"}},
              {"trackId": 2, "type": "AUDIO", "language": "en", "name": "English 5.1", "trackContentId": "audio-en-51",
               "roles": ["main", "surround"]},
              {"trackId": 3, "type": "VIDEO", "trackContentId": "video-1080p"}
            ],
            "textTrackStyle": {
              "foregroundColor": "#FFFF00FF", "backgroundColor": "#00000000", "edgeColor": "#000000FF",
              "windowColor": "#00000080", "edgeType": "OUTLINE", "fontScale": 1.2, "fontFamily": "Droid Sans",
              "fontGenericFamily": "SANS_SERIF", "fontStyle": "BOLD_ITALIC", "windowType": "ROUNDED_CORNERS",
              "windowRoundedCornerRadius": 8, "customData": {"preset": "high-contrast"}
            },
            "breaks": [
              {"id": "preroll", "breakClipIds": ["bc-1", "bc-2"], "position": 0, "duration": 30, "isEmbedded": false, "isWatched": false},
              {"id": "postroll", "breakClipIds": ["bc-3"], "position": -1, "isEmbedded": false, "isWatched": true}
            ],
            "breakClips": [
              {"id": "bc-1", "contentId": "https://ads.example.com/clips/1.mp4", "contentType": "video/mp4", "duration": 15,
               "title": "Ad 1", "posterUrl": "https://ads.example.com/clips/1.jpg",
               "clickThroughUrl": "https://ads.example.com/click/1", "whenSkippable": 5, "customData": {"campaign": 7}},
              {"id": "bc-2", "contentUrl": "https://ads.example.com/clips/2.m3u8", "contentType": "application/x-mpegurl",
               "duration": 15.5, "hlsSegmentFormat": "aac"},
              {"id": "bc-3", "vastAdsRequest": {"adTagUrl": "https://ads.example.com/vast.xml"}}
            ],
            "vmapAdsRequest": {"adsResponse": "<VMAP version=\"1.0\"></VMAP>"},
            "customData": {"catalogId": "sintel-2010"}
          },
          "queueData": {
            "id": "queue-1", "name": "Blender Open Movies", "description": "Short films",
            "entity": "https://example.com/collections/blender", "queueType": "VIDEO_PLAYLIST", "repeatMode": "REPEAT_ALL",
            "shuffle": false, "startIndex": 0, "startTime": 12.5,
            "containerMetadata": {
              "containerType": 0, "title": "Blender Open Movies", "containerDuration": 2400,
              "containerImages": [{"url": "https://media.example.com/collections/blender.jpg", "width": 800, "height": 450}],
              "sections": [{"metadataType": 0, "title": "2010s"}]
            },
            "items": [
              {"media": {"contentId": "https://media.example.com/films/tears.mp4", "contentType": "video/mp4",
                         "streamType": "BUFFERED", "duration": 734},
               "autoplay": true, "startTime": 0, "playbackDuration": -10, "preloadTime": 20, "activeTrackIds": [],
               "customData": {"pos": 1}}
            ]
          }
        }
        """#

    /// A PLAYING broadcast as a Chromecast sends it after a LOAD (requestId 0, queue fields, video info).
    static let mediaStatusPlaying = #"""
        {"type":"MEDIA_STATUS","requestId":0,"status":[{
          "mediaSessionId":1,"playbackRate":1,"playerState":"PLAYING","currentTime":12.345,
          "supportedMediaCommands":274447,"volume":{"level":1,"muted":false},"activeTrackIds":[],
          "currentItemId":1,"repeatMode":"REPEAT_OFF",
          "media":{"contentId":"http://192.168.1.20:8123/local/bbb.mp4","streamType":"BUFFERED","contentType":"video/mp4",
                   "metadata":{"metadataType":0,"title":"Big Buck Bunny"},"duration":596.474195,
                   "tracks":[{"trackId":1,"type":"VIDEO"}],"breakClips":[],"breaks":[],"mediaCategory":"VIDEO"},
          "items":[{"itemId":1,"autoplay":true,"orderId":0,
                    "media":{"contentId":"http://192.168.1.20:8123/local/bbb.mp4","streamType":"BUFFERED",
                             "contentType":"video/mp4","duration":596.474195}}],
          "queueData":{"repeatMode":"REPEAT_OFF","shuffle":false,"startIndex":0},
          "videoInfo":{"width":1280,"height":720,"hdrType":"sdr"},
          "liveSeekableRange":{"start":0,"end":596.4,"isMovingWindow":false,"isLiveDone":true},
          "breakStatus":{"breakId":"preroll","currentBreakTime":3},
          "customData":{"playerVersion":"3.0.0126"}}]}
        """#

    /// The reply to a LOAD while it is still loading: IDLE with extendedStatus LOADING.
    static let mediaStatusLoading = #"""
        {"type":"MEDIA_STATUS","requestId":16,"status":[{"mediaSessionId":2,"playbackRate":1,"playerState":"IDLE",
          "currentTime":0,"supportedMediaCommands":12303,"volume":{"level":1,"muted":false},
          "extendedStatus":{"playerState":"LOADING","mediaSessionId":2,
            "media":{"contentId":"http://192.168.1.20:8123/local/sintel.mp4","contentType":"video/mp4","streamType":"BUFFERED",
                     "metadata":{"metadataType":0,"title":"Sintel"}}}}]}
        """#

    /// The end of playback.
    static let mediaStatusFinished =
        #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"mediaSessionId":1,"playbackRate":1,"playerState":"IDLE","currentTime":0,"supportedMediaCommands":12303,"volume":{"level":1,"muted":false},"idleReason":"FINISHED"}]}"#

    /// The Default Media Receiver running, as in the protocol reference (§2.3).
    static let receiverStatus = #"""
        {"type":"RECEIVER_STATUS","requestId":0,
         "status":{"applications":[{"appId":"CC1AD845","appType":"WEB","displayName":"Default Media Receiver",
           "iconUrl":"","isIdleScreen":false,"launchedFromCloud":false,
           "namespaces":[{"name":"urn:x-cast:com.google.cast.cac"},{"name":"urn:x-cast:com.google.cast.debugoverlay"},
                         {"name":"urn:x-cast:com.google.cast.media"}],
           "sessionId":"f4327fa9-3e0b-4b8e-9d3c-2b6b1b5d8f21","statusText":"Default Media Receiver",
           "transportId":"f4327fa9-3e0b-4b8e-9d3c-2b6b1b5d8f21","universalAppId":"CC1AD845"}],
          "isActiveInput":true,"isStandBy":false,"userEq":{},
          "volume":{"controlType":"attenuation","level":1.0,"muted":false,"stepInterval":0.05}}}
        """#

    /// An idle speaker: no applications key at all.
    static let receiverStatusIdle =
        #"{"requestId":7,"status":{"isActiveInput":false,"isStandBy":true,"volume":{"controlType":"master","level":0.35,"muted":true,"stepInterval":0.02}},"type":"RECEIVER_STATUS"}"#
}

@Suite("Round trips of realistic messages")
struct RoundTripTests {
    /// The compact text of the parsed input and of the re-encoded value, for exact comparison.
    func texts(_ input: JSONValue, _ output: JSONValue) -> (String, String) {
        (JSONWriter.compact.string(from: input), JSONWriter.compact.string(from: output))
    }

    @Test("a pychromecast LOAD (sessionId, customData {}) comes back byte for byte")
    func pychromecast() throws {
        let (load, _, diagnostics) = try decode(LoadRequest.self, WireSamples.pychromecastLoad)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(load.jsonText == WireSamples.pychromecastLoad)
        #expect(load.sessionID == "f4327fa9-ae8b-4f1a-8ba6-a1cd0fd7f3d7")
        #expect(load.customData == [:])
        #expect(load.currentTime == 0)
        #expect(load.activeTrackIDs == [1])
        #expect(load.media?.metadata?.extraMembers["thumb"] == "http://192.168.1.20:8123/local/bbb.jpg")
        #expect(load.media?.tracks?.first?.subtype == .subtitles)
        #expect(load.media?.textTrackStyle?.edgeType == .outline)
    }

    @Test("a go-chromecast LOAD (queueData startIndex, integer currentTime) decodes")
    func goChromecastFields() throws {
        let (load, _, diagnostics) = try decode(LoadRequest.self, WireSamples.goChromecastLoad)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(load.requestID == 12)
        #expect(load.currentTime == 0)
        #expect(load.queueData?.startIndex == 0)
        #expect(load.queueData?.items == nil)
        #expect(load.media?.duration == 0)
        #expect(load.media?.metadata?.title == "")
        #expect(load.media?.metadata?.artist == "")
    }

    @Test("a go-chromecast LOAD comes back byte for byte, customData null included")
    func goChromecastRoundTrip() throws {
        let (load, _, _) = try decode(LoadRequest.self, WireSamples.goChromecastLoad)
        #expect(load.jsonText == WireSamples.goChromecastLoad)
    }

    /// catt sends `"streamType": null`; other senders null out whatever they do not set. A null
    /// member is an absent one, whatever type the member has, and still comes back on writing.
    @Test(
        "a null member reads as absent, with no type finding, and is written back",
        arguments: [
            #"{"type":"LOAD","requestId":3,"customData":null,"media":{"contentId":"a.mp4","contentType":null,"streamType":null,"duration":null,"metadata":null,"tracks":null,"customData":null}}"#,
            #"{"type":"LOAD","requestId":3,"autoplay":null,"currentTime":null,"media":{"contentId":"a.mp4","streamType":null}}"#,
        ])
    func nullMembersAreAbsent(text: String) throws {
        let (load, json, diagnostics) = try decode(LoadRequest.self, text)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let media = try #require(load.media)
        #expect(media.contentType == nil)
        #expect(media.streamType == nil)
        #expect(media.duration == nil)
        #expect(media.metadata == nil)
        #expect(media.tracks == nil)
        #expect(media.customData == nil)
        #expect(load.customData == nil)
        #expect(load.autoplay == nil)
        #expect(load.currentTime == nil)
        let (input, output) = texts(json, load.jsonValue)
        #expect(output == input)
    }

    @Test("a LOAD that sets every field round-trips exactly, literals included")
    func fullLoad() throws {
        let (load, json, diagnostics) = try decode(LoadRequest.self, WireSamples.fullLoad)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let (input, output) = texts(json, load.jsonValue)
        #expect(output == input)

        let media = try #require(load.media)
        #expect(media.contentID == "sintel-2010")
        #expect(media.playbackURL == "https://media.example.com/films/sintel/master.m3u8")
        #expect(media.duration == 888.0416)
        #expect(media.hlsSegmentFormat == .ts)
        #expect(media.hlsVideoSegmentFormat == .mpeg2TS)
        #expect(media.mediaCategory == .video)
        #expect(media.startAbsoluteTime == 1_285_545_600)
        #expect(media.entity == "https://example.com/watch/sintel")
        #expect(media.extraMembers.keys.sorted() == ["userActionStates"])
        #expect(media.metadata?.metadataType == .movie)
        #expect(media.metadata?.releaseYear == 2010)
        #expect(media.metadata?.images?.map(\.width) == [480, nil])
        #expect(media.tracks?.map(\.trackID) == [1, 2, 3])
        #expect(media.tracks?.map(\.type) == [.text, .audio, .video])
        #expect(media.tracks?[1].roles == ["main", "surround"])
        #expect(media.tracks?[0].customData == ["source": "opensubtitles"])
        let style = try #require(media.textTrackStyle)
        #expect(style.fontScale == 1.2)
        #expect(style.fontStyle == .boldItalic)
        #expect(style.windowType == .roundedCorners)
        #expect(style.windowRoundedCornerRadius == 8)
        #expect(style.fontFamily == "Droid Sans")
        #expect(media.breaks?.map(\.position) == [0, -1])
        #expect(media.breaks?[0].breakClipIDs == ["bc-1", "bc-2"])
        #expect(media.breaks?[1].isWatched == true)
        #expect(media.breakClips?[0].whenSkippable == 5)
        #expect(media.breakClips?[0].clickThroughURL == "https://ads.example.com/click/1")
        #expect(media.breakClips?[1].hlsSegmentFormat == .aac)
        #expect(media.breakClips?[2].vastAdsRequest?.adTagURL == "https://ads.example.com/vast.xml")
        #expect(media.vmapAdsRequest?.adsResponse == #"<VMAP version="1.0"></VMAP>"#)

        #expect(load.autoplay == false)
        #expect(load.playbackRate == 1.25)
        #expect(load.credentialsType == .web)
        #expect(load.loadOptions == ["contentFilteringMode": "FILTER_EXPLICIT"])
        let queue = try #require(load.queueData)
        #expect(queue.queueType == .videoPlaylist)
        #expect(queue.repeatMode == .all)
        #expect(queue.containerMetadata?.containerDuration == 2400)
        #expect(queue.containerMetadata?.sections?.first?.title == "2010s")
        #expect(queue.containerMetadata?.containerImages?.first?.height == 450)
        #expect(queue.items?.first?.playbackDuration == -10)
        #expect(queue.items?.first?.activeTrackIDs == [])
    }

    @Test("customData round-trips arbitrary nested JSON with its literals")
    func customData() throws {
        let custom =
            #"{"a":[1,{"b":null,"c":[[]],"d":{}}],"big":12345678901234567890,"e":"\u2028 \"q\"","exp":1E400,"f":1.10,"neg":-0}"#
        let text =
            #"{"customData":"# + custom
            + #","media":{"contentId":"https://x.example/a.mp4","contentType":"video/mp4","customData":"# + custom
            + #","streamType":"BUFFERED"},"type":"LOAD"}"#
        let (load, _, diagnostics) = try decode(LoadRequest.self, text)
        #expect(diagnostics.isEmpty)
        #expect(load.jsonText == text)
        #expect(JSONWriter.compact.string(from: try #require(load.customData)) == custom)
        #expect(load.media?.customData == load.customData)
    }

    @Test("unknown members are kept in extraMembers and written back")
    func unknownMembers() throws {
        let text =
            #"{"media":{"atvEntity":"tv://sintel","contentId":"https://x.example/a.mp4","contentType":"video/mp4","metadata":{"metadataType":1,"title":"Sintel","vendorRating":{"stars":4.5}},"streamType":"BUFFERED","tracks":[{"trackId":1,"type":"AUDIO","x-codec":"ac-3"}]},"resumeState":"","type":"LOAD"}"#
        let (load, _, diagnostics) = try decode(LoadRequest.self, text)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(load.extraMembers == ["resumeState": ""])
        #expect(load.media?.extraMembers == ["atvEntity": "tv://sintel"])
        #expect(load.media?.metadata?.extraMembers == ["vendorRating": ["stars": 4.5]])
        #expect(load.media?.tracks?.first?.extraMembers == ["x-codec": "ac-3"])
        #expect(load.jsonText == text)
    }

    @Test(
        "unknown vocabulary values decode, are not 'known', and are written back",
        arguments: [
            #"{"media":{"contentId":"https://x.example/a.mp4","contentType":"video/mp4","streamType":"FUTURE"},"type":"LOAD"}"#,
            #"{"media":{"contentId":"https://x.example/a.mp4","contentType":"video/mp4","hlsSegmentFormat":"e_ac3","mediaCategory":"HOLOGRAM","streamType":"BUFFERED"},"type":"LOAD"}"#,
            #"{"media":{"contentId":"https://x.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED","tracks":[{"subtype":"KARAOKE","trackId":1,"type":"LYRICS"}]},"type":"LOAD"}"#,
        ])
    func unknownVocabulary(text: String) throws {
        let (load, _, diagnostics) = try decode(LoadRequest.self, text)
        #expect(diagnostics.isEmpty)
        #expect(load.jsonText == text)
        let media = try #require(load.media)
        let unknown = [
            media.streamType.map { !$0.isKnown }, media.hlsSegmentFormat.map { !$0.isKnown },
            media.mediaCategory.map { !$0.isKnown },
            media.tracks?.first.map { !$0.type.isKnown }, media.tracks?.first?.subtype.map { !$0.isKnown },
        ].compactMap { $0 }
        #expect(unknown.contains(true))
    }

    @Test("a vocabulary value keeps its raw text")
    func vocabularyRaw() {
        let future: StreamType = "FUTURE"
        #expect(future.rawValue == "FUTURE")
        #expect(!future.isKnown)
        #expect(StreamType.live.isKnown)
        #expect(StreamType(rawValue: "BUFFERED") == .buffered)
        #expect(HLSSegmentFormat.eac3.rawValue == "e-ac3")
        #expect(!HLSSegmentFormat(rawValue: "e_ac3").isKnown)
        #expect(MetadataType(name: "tv_show") == .tvShow)
        #expect(MetadataType(name: "musictrack") == .musicTrack)
        #expect(MetadataType(name: "7")?.isKnown == false)
        #expect(MetadataType(name: "SERIES") == nil)
        #expect(MetadataType(rawValue: 9).name == "unknown (9)")
    }

    @Test(
        "MEDIA_STATUS broadcasts round-trip exactly",
        arguments: [
            WireSamples.mediaStatusPlaying, WireSamples.mediaStatusLoading, WireSamples.mediaStatusFinished,
        ])
    func mediaStatus(text: String) throws {
        let (message, json, diagnostics) = try decode(MediaStatusMessage.self, text)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        let (input, output) = texts(json, message.jsonValue)
        #expect(output == input)
        #expect(message.status.count == 1)
    }

    @Test("MEDIA_STATUS fields decode to their types")
    func mediaStatusFields() throws {
        let (message, _, _) = try decode(MediaStatusMessage.self, WireSamples.mediaStatusPlaying)
        let status = try #require(message.status.first)
        #expect(message.requestID == 0)
        #expect(status.playerState == .playing)
        #expect(status.currentTime == 12.345)
        #expect(status.supportedMediaCommands?.contains(.allBasicMedia) == true)
        #expect(status.supportedMediaCommands?.contains(.streamTransfer) == true)
        #expect(status.supportedMediaCommands?.contains(.queueNext) == false)
        #expect(status.volume?.level == 1)
        #expect(status.items?.first?.itemID == 1)
        #expect(status.items?.first?.extraMembers == ["orderId": 0])
        #expect(status.media?.mediaCategory == .video)
        #expect(status.videoInfo?["hdrType"] == "sdr")
        #expect(status.liveSeekableRange?["isLiveDone"] == true)
        #expect(MediaCommands.allBasicMedia.rawValue == 12303)

        let (loading, _, _) = try decode(MediaStatusMessage.self, WireSamples.mediaStatusLoading)
        #expect(loading.status.first?.extendedStatus?.playerState == .loading)
        #expect(loading.status.first?.extendedStatus?.media?.metadata?.title == "Sintel")
        let (finished, _, _) = try decode(MediaStatusMessage.self, WireSamples.mediaStatusFinished)
        #expect(finished.status.first?.idleReason == .finished)
    }

    @Test("RECEIVER_STATUS round-trips (numbers compare by value: 1.0 is written 1)")
    func receiverStatus() throws {
        let (message, json, diagnostics) = try decode(ReceiverStatusMessage.self, WireSamples.receiverStatus)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
        #expect(message.jsonValue == json)
        let status = try #require(message.status)
        let app = try #require(status.applications?.first)
        #expect(app.appID == LaunchRequest.defaultMediaReceiverAppID)
        #expect(app.transportID == "f4327fa9-3e0b-4b8e-9d3c-2b6b1b5d8f21")
        #expect(app.namespaces?.contains(CastNamespace.media.rawValue) == true)
        #expect(app.namespaces?.count == 3)
        #expect(status.volume?.controlType == "attenuation")
        #expect(status.volume?.stepInterval == 0.05)
        #expect(status.userEq == [:])

        let (idle, idleJSON, _) = try decode(ReceiverStatusMessage.self, WireSamples.receiverStatusIdle)
        // The writer sorts keys, so compare values rather than text.
        #expect(idle.jsonValue == idleJSON)
        #expect(idle.status?.applications == nil)
        #expect(idle.status?.volume?.muted == true)
    }

    @Test("old firmware's plain-string namespaces decode and are written in the current form")
    func plainNamespaces() throws {
        let text = #"{"appId":"CC1AD845","namespaces":["urn:x-cast:com.google.cast.media"],"transportId":"web-5"}"#
        let (app, _, _) = try decode(ReceiverApplication.self, text)
        #expect(app.namespaces == ["urn:x-cast:com.google.cast.media"])
        #expect(
            app.jsonText
                == #"{"appId":"CC1AD845","namespaces":[{"name":"urn:x-cast:com.google.cast.media"}],"transportId":"web-5"}"#
        )
    }

    @Test("requests built in Swift write the documented wire form")
    func builtRequests() {
        var media = MediaInformation(contentID: "https://cdn.example/bbb.mp4", contentType: "video/mp4", duration: 596)
        media.metadata = MediaMetadata(metadataType: .movie, title: "Big Buck Bunny")
        let load = LoadRequest(requestID: 1, media: media)
        #expect(
            load.jsonText
                == #"{"autoplay":true,"media":{"contentId":"https://cdn.example/bbb.mp4","contentType":"video/mp4","duration":596,"metadata":{"metadataType":1,"title":"Big Buck Bunny"},"streamType":"BUFFERED"},"requestId":1,"type":"LOAD"}"#
        )
        #expect(LaunchRequest(requestID: 2).jsonText == #"{"appId":"CC1AD845","requestId":2,"type":"LAUNCH"}"#)
        let edit = EditTracksInfoRequest(requestID: 3, mediaSessionID: 1, activeTrackIDs: [])
        #expect(edit.jsonText == #"{"activeTrackIds":[],"mediaSessionId":1,"requestId":3,"type":"EDIT_TRACKS_INFO"}"#)
        #expect(LoadRequest.namespace == .media)
        #expect(LaunchRequest.namespace == .receiver)
    }
}

@Suite("Codable conformance")
struct CodableTests {
    @Test("JSONDecoder and JSONEncoder round-trip a LOAD")
    func codableRoundTrip() throws {
        let decoded = try JSONDecoder().decode(LoadRequest.self, from: Data(WireSamples.pychromecastLoad.utf8))
        let (direct, _, _) = try decode(LoadRequest.self, WireSamples.pychromecastLoad)
        #expect(decoded == direct)
        let data = try JSONEncoder().encode(decoded)
        let again = try JSONDecoder().decode(LoadRequest.self, from: data)
        #expect(again == decoded)
        #expect(try JSONParser().parse(Array(data)).value == decoded.jsonValue)
    }

    @Test("Cast types nest inside ordinary Codable types")
    func nested() throws {
        struct Saved: Codable, Equatable {
            var name: String
            var media: MediaInformation
            var status: MediaStatusMessage?
        }
        let (status, _, _) = try decode(MediaStatusMessage.self, WireSamples.mediaStatusFinished)
        let saved = Saved(
            name: "last", media: MediaInformation(contentID: "https://x.example/a.mp4", contentType: "video/mp4"),
            status: status)
        let data = try JSONEncoder().encode(saved)
        #expect(try JSONDecoder().decode(Saved.self, from: data) == saved)
    }

    @Test(
        "JSONDecoder throws on type errors",
        arguments: [
            #"{"type":"LOAD","media":{"contentId":"https://x.example/a.mp4","duration":"596"}}"#,
            #"{"type":"LOAD","media":"https://x.example/a.mp4"}"#,
            #"{"type":"LOAD","requestId":"1"}"#,
            #"{"type":"LOAD","media":{"tracks":[{"trackId":1.5,"type":"TEXT"}]}}"#,
            #"{"type":"QUEUE_LOAD","items":[]}"#,
            #"[1,2]"#,
            #""LOAD""#,
        ])
    func decoderThrows(text: String) {
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(LoadRequest.self, from: Data(text.utf8))
        }
    }

    @Test("init(jsonText:) throws the code and path of the first error")
    func jsonTextThrows() throws {
        let error = try #require(throws: CastModelError.self) {
            _ = try LoadRequest(
                jsonText: #"{"type":"LOAD","media":{"contentId":"https://x.example/a.mp4","duration":"596"}}"#)
        }
        #expect(error.code == "json.type-mismatch")
        #expect(error.message.hasPrefix("$.media.duration: "))
        #expect(error.description.hasSuffix(" [json.type-mismatch]"))

        let notObject = try #require(throws: CastModelError.self) { _ = try MediaInformation(jsonText: "[]") }
        #expect(notObject.code == "json.type-mismatch")
        #expect(throws: JSONSyntaxError.self) { _ = try MediaInformation(jsonText: "{") }
        let media = try MediaInformation(jsonText: #"{"contentId":"https://x.example/a.mp4","streamType":"LIVE"}"#)
        #expect(media.streamType == .live)
    }

    @Test("vocabularies and metadata types encode as their raw values")
    func vocabularyCodable() throws {
        let data = try JSONEncoder().encode([StreamType.live, "FUTURE"])
        #expect(String(decoding: data, as: UTF8.self) == #"["LIVE","FUTURE"]"#)
        #expect(try JSONDecoder().decode([StreamType].self, from: data) == [.live, "FUTURE"])
        let types = try JSONDecoder().decode([MetadataType].self, from: Data("[1,7]".utf8))
        #expect(types == [.movie, MetadataType(rawValue: 7)])
    }
}
