import Testing

@testable import CastModel
@testable import JSONSupport

/// One validator rule: a message that passes it and one that breaks it.
struct RuleCase: Sendable, CustomTestStringConvertible {
    var code: DiagnosticCode
    var label: String
    var severity: Diagnostic.Severity
    var path: String
    var good: String
    var bad: String
    var fixContains: String?

    var testDescription: String { "\(code.rawValue): \(label)" }
}

@Suite("CastValidator rules")
struct CastValidatorRuleTests {
    typealias F = Fixture

    static let rules: [RuleCase] = [
        // MARK: Content id and URLs
        RuleCase(
            code: "media.content-id-missing", label: "no contentId or contentUrl", severity: .error, path: "$.media",
            good: F.load(), bad: F.load(media: { $0["contentId"] = nil })),
        RuleCase(
            code: "media.content-id-missing", label: "contentUrl without contentId", severity: .warning,
            path: "$.media",
            good: F.load(media: { $0["contentUrl"] = .string(F.mediaURL) }),
            bad: F.load(media: {
                $0["contentId"] = nil
                $0["contentUrl"] = .string(F.mediaURL)
            })),
        RuleCase(
            code: "url.not-absolute", label: "relative path", severity: .error, path: "$.media.contentId",
            good: F.load(), bad: F.load(media: { $0["contentId"] = "films/sintel.mp4" }),
            fixContains: "https://media.example.com/films/sintel.mp4"),
        RuleCase(
            code: "url.scheme", label: "file://", severity: .error, path: "$.media.contentId",
            good: F.load(), bad: F.load(media: { $0["contentId"] = "file:///home/me/Videos/sintel.mp4" }),
            fixContains: "castprep serve"),
        RuleCase(
            code: "url.scheme", label: "rtsp://", severity: .error, path: "$.media.contentId",
            good: F.load(), bad: F.load(media: { $0["contentId"] = "rtsp://192.168.1.30:554/stream1" }),
            fixContains: "http"),
        RuleCase(
            code: "url.invalid-character", label: "space", severity: .error, path: "$.media.contentId",
            good: F.load(media: { $0["contentId"] = "https://media.example.com/films/my%20film.mp4" }),
            bad: F.load(media: { $0["contentId"] = "https://media.example.com/films/my film.mp4" }), fixContains: "%20"),
        RuleCase(
            code: "url.loopback", label: "localhost content", severity: .error, path: "$.media.contentId",
            good: F.load(media: { $0["contentId"] = "http://192.168.1.20:8000/sintel.mp4" }),
            bad: F.load(media: { $0["contentId"] = "http://localhost:8000/sintel.mp4" })),
        RuleCase(
            code: "url.loopback", label: "127.0.0.1 content", severity: .error, path: "$.media.contentId",
            good: F.load(media: { $0["contentId"] = "http://192.168.1.20:8000/sintel.mp4" }),
            bad: F.load(media: { $0["contentId"] = "http://127.0.0.1:8000/sintel.mp4" })),
        RuleCase(
            code: "url.loopback", label: "loopback image is only a warning", severity: .warning,
            path: "$.media.metadata.images[0].url",
            good: F.load(),
            bad: F.load(media: {
                $0["metadata"] = [
                    "metadataType": 1, "title": "Sintel", "images": [["url": "http://localhost/poster.jpg"]],
                ]
            })),

        // MARK: Content type
        RuleCase(
            code: "media.content-type-missing", label: "absent", severity: .error, path: "$.media.contentType",
            good: F.load(), bad: F.load(media: { $0["contentType"] = nil }), fixContains: "video/mp4"),
        RuleCase(
            code: "media.content-type-malformed", label: "unquoted codecs list", severity: .error,
            path: "$.media.contentType",
            good: F.load(media: { $0["contentType"] = #"video/mp4; codecs="avc1.640028, mp4a.40.2""# }),
            bad: F.load(media: { $0["contentType"] = "video/mp4; codecs=avc1.640028,mp4a.40.2" }),
            fixContains: #"codecs="a, b""#),
        RuleCase(
            code: "media.content-type-unknown", label: "videos/mp4", severity: .error, path: "$.media.contentType",
            good: F.load(), bad: F.load(media: { $0["contentType"] = "videos/mp4" }), fixContains: #""video/mp4""#),
        RuleCase(
            code: "media.content-type-unsupported", label: "Matroska", severity: .error, path: "$.media.contentType",
            good: F.load(),
            bad: F.load(media: {
                $0["contentId"] = "https://media.example.com/films/sintel.mkv"
                $0["contentType"] = "video/x-matroska"
            }), fixContains: "ffmpeg"),
        RuleCase(
            code: "media.content-type-mismatch", label: ".m3u8 sent as video/mp4", severity: .error,
            path: "$.media.contentType",
            good: F.load(media: {
                $0["contentId"] = "https://media.example.com/films/sintel/master.m3u8"
                $0["contentType"] = "application/x-mpegurl"
            }),
            bad: F.load(media: { $0["contentId"] = "https://media.example.com/films/sintel/master.m3u8" }),
            fixContains: "application/x-mpegurl"),

        // MARK: Stream type and duration
        RuleCase(
            code: "media.stream-type-missing", label: "absent", severity: .error, path: "$.media",
            good: F.load(), bad: F.load(media: { $0["streamType"] = nil })),
        RuleCase(
            code: "value.unknown", label: "streamType FUTURE", severity: .error, path: "$.media.streamType",
            good: F.load(), bad: F.load(media: { $0["streamType"] = "FUTURE" })),
        RuleCase(
            code: "media.duration-stream-type", label: "BUFFERED with -5", severity: .error, path: "$.media.duration",
            good: F.load(), bad: F.load(media: { $0["duration"] = -5 })),
        RuleCase(
            code: "media.duration-stream-type", label: "LIVE with 600", severity: .warning, path: "$.media.duration",
            good: F.load(media: {
                $0["streamType"] = "LIVE"
                $0["duration"] = -1
            }),
            bad: F.load(media: {
                $0["streamType"] = "LIVE"
                $0["duration"] = 600
            })),
        RuleCase(
            code: "media.duration-missing", label: "BUFFERED without duration", severity: .warning, path: "$.media",
            good: F.load(), bad: F.load(media: { $0["duration"] = nil })),

        // MARK: Tracks
        RuleCase(
            code: "track.id-duplicate", label: "two tracks with id 1", severity: .error,
            path: "$.media.tracks[1].trackId",
            good: F.loadWithTracks([F.englishSubtitles, F.frenchSubtitles]),
            bad: F.loadWithTracks([F.englishSubtitles, F.track(F.frenchSubtitles) { $0["trackId"] = 1 }])),
        RuleCase(
            code: "track.id-not-positive", label: "trackId 0", severity: .error, path: "$.media.tracks[0].trackId",
            good: F.loadWithTracks([F.englishSubtitles]), bad: F.loadWithTracks([F.track { $0["trackId"] = 0 }])),
        RuleCase(
            code: "track.id-missing", label: "no trackId", severity: .error, path: "$.media.tracks[0]",
            good: F.loadWithTracks([F.englishSubtitles]), bad: F.loadWithTracks([F.track { $0["trackId"] = nil }])),
        RuleCase(
            code: "track.type-missing", label: "no type", severity: .error, path: "$.media.tracks[0]",
            good: F.loadWithTracks([F.englishSubtitles]), bad: F.loadWithTracks([F.track { $0["type"] = nil }])),
        RuleCase(
            code: "track.content-id-missing", label: "TEXT without trackContentId", severity: .error,
            path: "$.media.tracks[0]",
            good: F.loadWithTracks([F.englishSubtitles]),
            bad: F.loadWithTracks([F.track { $0["trackContentId"] = nil }])),
        RuleCase(
            code: "track.content-type-missing", label: "TEXT without trackContentType", severity: .error,
            path: "$.media.tracks[0]",
            good: F.loadWithTracks([F.englishSubtitles]),
            bad: F.loadWithTracks([F.track { $0["trackContentType"] = nil }])),
        RuleCase(
            code: "track.content-type-unsupported", label: "SRT", severity: .error,
            path: "$.media.tracks[0].trackContentType",
            good: F.loadWithTracks([F.englishSubtitles]),
            bad: F.loadWithTracks([
                F.track {
                    $0["trackContentId"] = "https://media.example.com/films/sintel.en.srt"
                    $0["trackContentType"] = "application/x-subrip"
                }
            ]), fixContains: "castprep captions convert"),
        RuleCase(
            code: "track.language-missing", label: "SUBTITLES without language", severity: .error,
            path: "$.media.tracks[0]",
            good: F.loadWithTracks([F.englishSubtitles]), bad: F.loadWithTracks([F.track { $0["language"] = nil }])),
        RuleCase(
            code: "track.language-missing", label: "CAPTIONS without language", severity: .warning,
            path: "$.media.tracks[0]",
            good: F.loadWithTracks([F.track { $0["subtype"] = "CAPTIONS" }]),
            bad: F.loadWithTracks([
                F.track {
                    $0["subtype"] = "CAPTIONS"
                    $0["language"] = nil
                }
            ])),
        RuleCase(
            code: "track.language-malformed", label: "en_US", severity: .error, path: "$.media.tracks[0].language",
            good: F.loadWithTracks([F.englishSubtitles]), bad: F.loadWithTracks([F.track { $0["language"] = "en_US" }]),
            fixContains: #""en-US""#),
        RuleCase(
            code: "track.language-name", label: "English", severity: .warning, path: "$.media.tracks[0].language",
            good: F.loadWithTracks([F.englishSubtitles]),
            bad: F.loadWithTracks([F.track { $0["language"] = "English" }]),
            fixContains: #""en""#),
        RuleCase(
            code: "load.active-track-unknown", label: "activeTrackIds names a missing track", severity: .error,
            path: "$.activeTrackIds[0]",
            good: F.loadWithTracks([F.englishSubtitles], activeTrackIDs: [1]),
            bad: F.loadWithTracks([F.englishSubtitles], activeTrackIDs: [2]), fixContains: "1"),
        RuleCase(
            code: "load.several-text-tracks-active", label: "two subtitle tracks on", severity: .warning,
            path: "$.activeTrackIds",
            good: F.loadWithTracks([F.englishSubtitles, F.frenchSubtitles], activeTrackIDs: [2]),
            bad: F.loadWithTracks([F.englishSubtitles, F.frenchSubtitles], activeTrackIDs: [1, 2])),

        // MARK: Text style
        RuleCase(
            code: "style.color-format", label: "#FFF", severity: .error, path: "$.media.textTrackStyle.foregroundColor",
            good: F.styled { _ in }, bad: F.styled { $0["foregroundColor"] = "#FFF" }),
        RuleCase(
            code: "style.color-format", label: "#FFFFFF without alpha", severity: .error,
            path: "$.media.textTrackStyle.foregroundColor",
            good: F.styled { $0["foregroundColor"] = "#ffffffff" }, bad: F.styled { $0["foregroundColor"] = "#FFFFFF" },
            fixContains: "#FFFFFFFF"),
        RuleCase(
            code: "style.color-format", label: "red", severity: .error, path: "$.media.textTrackStyle.backgroundColor",
            good: F.styled { _ in }, bad: F.styled { $0["backgroundColor"] = "red" }, fixContains: "#RRGGBBAA"),
        RuleCase(
            code: "style.font-scale-range", label: "0", severity: .error, path: "$.media.textTrackStyle.fontScale",
            good: F.styled { $0["fontScale"] = 1.5 }, bad: F.styled { $0["fontScale"] = 0 }),
        RuleCase(
            code: "style.font-scale-range", label: "3.5", severity: .warning, path: "$.media.textTrackStyle.fontScale",
            good: F.styled { $0["fontScale"] = 2 }, bad: F.styled { $0["fontScale"] = 3.5 }),
        RuleCase(
            code: "style.corner-radius-ignored", label: "radius without ROUNDED_CORNERS", severity: .warning,
            path: "$.media.textTrackStyle.windowRoundedCornerRadius",
            good: F.styled {
                $0["windowType"] = "ROUNDED_CORNERS"
                $0["windowRoundedCornerRadius"] = 8
            },
            bad: F.styled {
                $0["windowType"] = "NORMAL"
                $0["windowRoundedCornerRadius"] = 8
            }),

        // MARK: Queues
        RuleCase(
            code: "queue.item-id-present", label: "QUEUE_LOAD", severity: .error, path: "$.items[0].itemId",
            good: F.queueLoad([F.item(1), F.item(2)]), bad: F.queueLoad([F.item(1) { $0["itemId"] = 1 }, F.item(2)])),
        RuleCase(
            code: "queue.item-id-present", label: "QUEUE_INSERT", severity: .error, path: "$.items[0].itemId",
            good: F.queueInsert([F.item(3)]), bad: F.queueInsert([F.item(3) { $0["itemId"] = 3 }])),
        RuleCase(
            code: "queue.item-id-present", label: "LOAD queueData", severity: .error,
            path: "$.queueData.items[0].itemId",
            good: F.load(load: { $0["queueData"] = ["items": [.object(F.item(1))], "startIndex": 0] }),
            bad: F.load(load: {
                $0["queueData"] = ["items": [.object(F.item(1) { $0["itemId"] = 7 })], "startIndex": 0]
            })),
        RuleCase(
            code: "queue.start-index-range", label: "QUEUE_LOAD startIndex past the end", severity: .error,
            path: "$.startIndex",
            good: F.queueLoad([F.item(1), F.item(2)]) { $0["startIndex"] = 1 },
            bad: F.queueLoad([F.item(1), F.item(2)]) { $0["startIndex"] = 2 }),
        RuleCase(
            code: "queue.start-index-range", label: "LOAD queueData startIndex negative", severity: .error,
            path: "$.queueData.startIndex",
            good: F.load(load: { $0["queueData"] = ["items": [.object(F.item(1))], "startIndex": 0] }),
            bad: F.load(load: { $0["queueData"] = ["items": [.object(F.item(1))], "startIndex": -1] })),
        RuleCase(
            code: "queue.preload-negative", label: "-5", severity: .error, path: "$.items[1].preloadTime",
            good: F.queueLoad([F.item(1), F.item(2)]),
            bad: F.queueLoad([F.item(1), F.item(2) { $0["preloadTime"] = -5 }])),
        RuleCase(
            code: "queue.items-empty", label: "QUEUE_LOAD with no items", severity: .error, path: "$.items",
            good: F.queueLoad([F.item(1)]), bad: F.queueLoad([])),

        // MARK: HLS formats
        RuleCase(
            code: "media.hls-format-not-hls", label: "hlsSegmentFormat on MP4", severity: .warning,
            path: "$.media.hlsSegmentFormat",
            good: F.load(media: {
                $0["contentId"] = "https://media.example.com/films/sintel/master.m3u8"
                $0["contentType"] = "application/x-mpegurl"
                $0["hlsSegmentFormat"] = "aac"
            }),
            bad: F.load(media: { $0["hlsSegmentFormat"] = "aac" })),
        RuleCase(
            code: "value.unknown", label: "hlsSegmentFormat e_ac3", severity: .error, path: "$.media.hlsSegmentFormat",
            good: F.load(media: {
                $0["contentId"] = "https://media.example.com/films/sintel/master.m3u8"
                $0["contentType"] = "application/x-mpegurl"
                $0["hlsSegmentFormat"] = "e-ac3"
            }),
            bad: F.load(media: {
                $0["contentId"] = "https://media.example.com/films/sintel/master.m3u8"
                $0["contentType"] = "application/x-mpegurl"
                $0["hlsSegmentFormat"] = "e_ac3"
            }), fixContains: #""e-ac3""#),

        // MARK: Frame size
        RuleCase(
            code: "message.frame-too-large", label: "QUEUE_LOAD of 300 episodes", severity: .error, path: "$",
            good: F.queueLoad((1...20).map { F.item($0) }), bad: F.queueLoad((1...300).map { F.item($0) }),
            fixContains: "QUEUE_INSERT"),

        // MARK: LAUNCH
        RuleCase(
            code: "launch.app-id-missing", label: "no appId", severity: .error, path: "$",
            good: F.launch(), bad: F.launch { $0["appId"] = nil }, fixContains: "CC1AD845"),
        RuleCase(
            code: "value.unknown", label: "supportedAppTypes ANDROID", severity: .error, path: "$.supportedAppTypes[1]",
            good: F.launch(), bad: F.launch { $0["supportedAppTypes"] = ["WEB", "ANDROID"] },
            fixContains: #""ANDROID_TV""#),

        // MARK: Metadata and JSON shape
        RuleCase(
            code: "metadata.field-not-for-type", label: "studio on MUSIC_TRACK", severity: .warning,
            path: "$.media.metadata.studio",
            good: F.load(),
            bad: F.load(media: {
                $0["metadata"] = [
                    "metadataType": 3, "title": "Sintel Main Theme", "artist": "Jan Morgenstern",
                    "studio": "Blender Foundation",
                ]
            })),
        RuleCase(
            code: "json.unknown-member", label: "contentID", severity: .warning, path: "$.media.contentID",
            good: F.load(), bad: F.load(media: { $0["contentID"] = .string(F.mediaURL) }), fixContains: "'contentId'"),
        RuleCase(
            code: "json.type-mismatch", label: #"duration "596""#, severity: .error, path: "$.media.duration",
            good: F.load(), bad: F.load(media: { $0["duration"] = "596" }), fixContains: "remove the quotes"),
    ]

    @Test("the good message passes the rule", arguments: rules)
    func good(_ rule: RuleCase) throws {
        let diagnostics = try findings(rule.good)
        #expect(!diagnostics.contains { $0.code == rule.code }, "\(diagnostics)")
        // The good variants are fully clean, so any finding points at a broken fixture or a false positive.
        #expect(diagnostics.isEmpty, "\(diagnostics)")
    }

    @Test("the bad message is reported once, with severity and path", arguments: rules)
    func bad(_ rule: RuleCase) throws {
        let diagnostics = try findings(rule.bad)
        let matching = diagnostics.filter { $0.code == rule.code }
        #expect(matching.count == 1, "\(diagnostics)")
        let diagnostic = try #require(matching.first)
        #expect(diagnostic.severity == rule.severity)
        #expect(diagnostic.path?.description == rule.path)
        #expect(!diagnostic.message.isEmpty)
        if let fixContains = rule.fixContains {
            let fix = try #require(diagnostic.fix)
            #expect(fix.contains(fixContains), "fix: \(fix)")
        }
    }
}

@Suite("CastValidator on whole messages")
struct CastValidatorMessageTests {
    /// A LOAD as CastPrep itself would send it for a film with captions.
    static let realisticLoad = """
        {
          "type": "LOAD",
          "requestId": 17,
          "autoplay": true,
          "currentTime": 0,
          "activeTrackIds": [1],
          "media": {
            "contentId": "http://192.168.1.20:8000/films/sintel/sintel.mp4",
            "contentType": "video/mp4; codecs=\\"avc1.640028, mp4a.40.2\\"",
            "streamType": "BUFFERED",
            "duration": 888.0,
            "metadata": {
              "metadataType": 1,
              "title": "Sintel",
              "subtitle": "A Blender Open Movie",
              "studio": "Blender Foundation",
              "releaseDate": "2010-09-27",
              "images": [
                {"url": "http://192.168.1.20:8000/films/sintel/poster-480x270.jpg", "width": 480, "height": 270}
              ]
            },
            "tracks": [
              {
                "trackId": 1, "type": "TEXT", "subtype": "SUBTITLES", "language": "en", "name": "English",
                "trackContentId": "http://192.168.1.20:8000/films/sintel/sintel.en.vtt", "trackContentType": "text/vtt"
              },
              {
                "trackId": 2, "type": "TEXT", "subtype": "SUBTITLES", "language": "pt-BR", "name": "Português (Brasil)",
                "trackContentId": "http://192.168.1.20:8000/films/sintel/sintel.pt-BR.vtt", "trackContentType": "text/vtt"
              },
              {"trackId": 3, "type": "AUDIO", "language": "en", "name": "Stereo", "trackContentId": "audio-en"}
            ],
            "textTrackStyle": {
              "foregroundColor": "#FFFFFFFF", "backgroundColor": "#00000080", "edgeType": "DROP_SHADOW",
              "edgeColor": "#000000FF", "fontScale": 1.0, "fontGenericFamily": "SANS_SERIF", "windowType": "NONE"
            },
            "customData": {"catalogId": "sintel-2010", "rank": 1}
          }
        }
        """

    @Test("a valid realistic LOAD produces no diagnostics at all")
    func realisticLoadIsClean() throws {
        let diagnostics = try findings(Self.realisticLoad)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
    }

    @Test(
        "content type case: a note only where case does not matter and the fix differs; codec strings are left as written",
        arguments: [
            ("video/mp4; codecs=\"avc1.6E000C, mp4a.40.2\"", nil),
            ("Video/MP4", "video/mp4"),
            ("video/mp4; Codecs=\"avc1.640028\"", "video/mp4; codecs=avc1.640028"),
            ("application/x-mpegURL", "application/x-mpegurl"),
        ] as [(String, String?)])
    func contentTypeCase(contentType: String, fix: String?) throws {
        let text = Fixture.load(media: {
            $0["contentId"] = "https://media.example.com/a.mp4"
            $0["contentType"] = .string(contentType)
        })
        let notes = try findings(text).filter { $0.code == "media.content-type-case" }
        if let fix {
            #expect(notes.count == 1)
            #expect(notes.first?.fix == "write \"\(fix)\"")
            #expect(notes.first?.fix != "write \"\(contentType)\"")
        } else {
            #expect(notes.isEmpty, "\(notes)")
        }
    }

    @Test("a valid HLS LOAD with queue data produces no diagnostics")
    func hlsQueueIsClean() throws {
        let text = Fixture.load(
            media: {
                $0["contentId"] = "https://media.example.com/live/channel-1/master.m3u8"
                $0["contentType"] = "application/vnd.apple.mpegurl"
                $0["streamType"] = "LIVE"
                $0["duration"] = -1
                $0["hlsSegmentFormat"] = "fmp4"
                $0["hlsVideoSegmentFormat"] = "fmp4"
                $0["startAbsoluteTime"] = 1_700_000_000
            },
            load: {
                $0["queueData"] = [
                    "queueType": "LIVE_TV", "repeatMode": "REPEAT_OFF", "startIndex": 0,
                    "items": [.object(Fixture.item(1))],
                ]
            })
        let diagnostics = try findings(text)
        #expect(diagnostics.isEmpty, "\(diagnostics)")
    }

    @Test("a type that is a typo of a known one is an error with a suggestion; an unmodelled one is a note")
    func messageTypes() throws {
        let typo = try findings(#"{"type":"LAOD","requestId":1}"#)
        let typoFinding = try #require(typo.first { $0.code == "message.type-unknown" })
        #expect(typoFinding.severity == .error)
        #expect(typoFinding.fix?.contains(#""LOAD""#) == true)
        #expect(typoFinding.path?.description == "$.type")

        let other = try findings(#"{"type":"PRECACHE","requestId":1}"#)
        #expect(other.map(\.code) == ["message.type-unknown"])
        #expect(other.first?.severity == .note)

        let control = try findings(#"{"type":"SEKE","requestId":1}"#)
        #expect(control.first?.fix?.contains(#""SEEK""#) == true)
    }

    @Test("decode recognises each message kind")
    func kinds() throws {
        let samples: [(String, String)] = [
            (Fixture.load(), "LOAD"),
            (Fixture.queueLoad([Fixture.item(1)]), "QUEUE_LOAD"),
            (Fixture.queueInsert([Fixture.item(1)]), "QUEUE_INSERT"),
            (#"{"type":"EDIT_TRACKS_INFO","requestId":9,"mediaSessionId":1,"activeTrackIds":[]}"#, "EDIT_TRACKS_INFO"),
            (Fixture.launch(), "LAUNCH"),
            (compact(Fixture.media), "MediaInformation"),
            (#"{"type":"MEDIA_STATUS","requestId":0,"status":[]}"#, "MEDIA_STATUS"),
            (
                #"{"type":"RECEIVER_STATUS","requestId":0,"status":{"volume":{"level":1.0,"muted":false}}}"#,
                "RECEIVER_STATUS"
            ),
            (#"{"type":"SEEK","requestId":3,"mediaSessionId":1,"currentTime":42.5}"#, "SEEK"),
            (#"{"type":"QUEUE_NEXT","requestId":4}"#, "QUEUE_NEXT"),
            (#"{"type":"GET_STATUS","requestId":1}"#, "GET_STATUS"),
            (#"{"type":"SET_VOLUME","requestId":5,"volume":{"muted":true}}"#, "SET_VOLUME"),
            (#"{"type":"PING"}"#, "PING"),
        ]
        for (text, kind) in samples {
            var diagnostics: [Diagnostic] = []
            let json = try parseJSON(text)
            let decoded = CastMessage.decode(from: json, diagnostics: &diagnostics)
            let message = try #require(decoded)
            #expect(message.kindName == kind)
            #expect(message.jsonValue == json)
        }
    }

    @Test("not an object, or an object that is nothing Cast, does not decode")
    func notMessages() throws {
        var diagnostics: [Diagnostic] = []
        let array = CastMessage.decode(from: [1, 2], diagnostics: &diagnostics)
        #expect(array == nil)
        #expect(diagnostics.map(\.code) == ["message.not-object"])
        diagnostics = []
        let untyped = CastMessage.decode(from: ["title": "x"], diagnostics: &diagnostics)
        #expect(untyped == nil)
        #expect(diagnostics.map(\.code) == ["message.type-missing"])
    }

    @Test("EDIT_TRACKS_INFO is checked against the current tracks when they are known")
    func editTracks() throws {
        let json = try parseJSON(
            #"{"type":"EDIT_TRACKS_INFO","requestId":9,"mediaSessionId":1,"activeTrackIds":[1,4],"language":"en_GB"}"#)
        var diagnostics: [Diagnostic] = []
        let decoded = EditTracksInfoRequest.decode(from: json, at: .root, diagnostics: &diagnostics)
        let request = try #require(decoded)
        #expect(diagnostics.isEmpty)
        let findings = CastValidator().validate(request, tracks: [Self.track])
        #expect(findings.map(\.code).sorted() == ["load.active-track-unknown", "track.language-malformed"])
        #expect(findings.first { $0.code == "load.active-track-unknown" }?.path?.description == "$.activeTrackIds[1]")
        #expect(findings.first { $0.code == "track.language-malformed" }?.path?.description == "$.language")
        // Without the tracks only the list itself can be checked.
        #expect(CastValidator().validate(request).map(\.code) == ["track.language-malformed"])
    }

    static let track = MediaTrack(
        trackID: 1, type: .text, trackContentID: "https://x.example/a.vtt", trackContentType: "text/vtt",
        subtype: .subtitles,
        language: "en")

    @Test("a track listed twice in activeTrackIds is a duplicate, not several active text tracks")
    func duplicateActiveTrack() {
        let request = EditTracksInfoRequest(requestID: 9, mediaSessionID: 1, activeTrackIDs: [1, 1])
        let findings = CastValidator().validate(request, tracks: [Self.track])
        let duplicate = findings.first { $0.code == "load.active-track-duplicate" }
        #expect(duplicate?.severity == .warning)
        #expect(duplicate?.path?.description == "$.activeTrackIds[1]")
        #expect(!findings.contains { $0.code == "load.several-text-tracks-active" })
    }

    @Test("diagnostics render as compiler-style text")
    func rendering() {
        let diagnostic = Diagnostic(
            .error, "media.content-type-missing", "contentType is missing", fix: "set contentType",
            location: .init(file: "load.json", line: 3, column: 5),
            path: JSONPath.root.appending("media").appending("contentType"))
        #expect(
            diagnostic.description == """
                load.json:3:5: error: [media.content-type-missing] contentType is missing
                    at: $.media.contentType
                    fix: set contentType
                """)
        #expect([diagnostic].containsErrors)
        #expect([diagnostic].maximumSeverity == .error)
        #expect([Diagnostic]().maximumSeverity == nil)
    }
}

@Suite("Metadata field masks")
struct MetadataFieldMaskTests {
    @Test("each type's mask holds exactly the fields its name list holds", arguments: 0...6)
    func masks(type: Int) {
        let metadataType = MetadataType(rawValue: type)
        let names = MediaMetadata.fieldNames(for: metadataType)
        let mask = MediaMetadata.fieldMask(for: metadataType)
        #expect((names == nil) == (mask == nil))
        guard let names, let mask else { return }
        let masked = Set(
            MediaMetadata.modelledFieldNames.enumerated().filter { mask & 1 << UInt64($0.offset) != 0 }.map(\.element))
        #expect(masked == names.intersection(MediaMetadata.modelledFieldNames))
    }

    @Test("fields are numbered in the order they are visited, each name once")
    func numbering() {
        var metadata = MediaMetadata(metadataType: .movie, title: "T", subtitle: "S")
        metadata.studio = "Studio"
        metadata.contentRating = "PG"
        var numbers: [Int] = []
        metadata.forEachSetField { numbers.append($0) }
        var names: [String] = []
        metadata.forEachSetFieldName { names.append($0) }
        #expect(numbers == numbers.sorted())
        #expect(names == ["title", "subtitle", "studio", "contentRating"])
        #expect(Set(MediaMetadata.modelledFieldNames).count == MediaMetadata.modelledFieldNames.count)
    }
}
