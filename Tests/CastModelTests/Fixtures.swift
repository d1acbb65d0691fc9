import Testing

@testable import CastModel
@testable import JSONSupport

/// Parses JSON text, recording an issue (and throwing) when it is not valid JSON.
func parseJSON(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> JSONValue {
    do {
        return try JSONParser().parse(text).value
    } catch {
        Issue.record("fixture is not JSON: \(error)", sourceLocation: sourceLocation)
        throw error
    }
}

/// Decodes a message and validates it: what `castprep validate` would print.
func findings(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [Diagnostic] {
    let json = try parseJSON(text, sourceLocation: sourceLocation)
    var diagnostics: [Diagnostic] = []
    let message = try #require(
        CastMessage.decode(from: json, diagnostics: &diagnostics), sourceLocation: sourceLocation)
    return diagnostics + CastValidator().validate(message)
}

/// Compact JSON text of an object.
func compact(_ members: [String: JSONValue]) -> String {
    JSONWriter.compact.string(from: .object(members))
}

/// Realistic request bodies, built from plain JSON values so a test can change one field.
enum Fixture {
    static let mediaURL = "https://media.example.com/films/sintel.mp4"

    /// A movie that passes every rule.
    static let media: [String: JSONValue] = [
        "contentId": .string(mediaURL),
        "contentType": "video/mp4",
        "streamType": "BUFFERED",
        "duration": 888,
        "metadata": [
            "metadataType": 1,
            "title": "Sintel",
            "studio": "Blender Foundation",
            "releaseDate": "2010-09-27",
            "images": [["url": "https://media.example.com/films/sintel.jpg", "width": 480, "height": 270]],
        ],
    ]

    static let englishSubtitles: [String: JSONValue] = [
        "trackId": 1, "type": "TEXT", "subtype": "SUBTITLES", "language": "en-US", "name": "English",
        "trackContentId": "https://media.example.com/films/sintel.en.vtt", "trackContentType": "text/vtt",
    ]

    static let frenchSubtitles: [String: JSONValue] = [
        "trackId": 2, "type": "TEXT", "subtype": "SUBTITLES", "language": "fr", "name": "Français",
        "trackContentId": "https://media.example.com/films/sintel.fr.vtt", "trackContentType": "text/vtt",
    ]

    static let style: [String: JSONValue] = [
        "foregroundColor": "#FFFFFFFF", "backgroundColor": "#00000080", "edgeType": "OUTLINE", "edgeColor": "#000000FF",
        "fontScale": 1, "fontGenericFamily": "SANS_SERIF", "windowType": "NONE",
    ]

    /// A LOAD of ``media`` after `editMedia` and `editLoad` have changed it.
    static func load(
        media editMedia: (inout [String: JSONValue]) -> Void = { _ in },
        load editLoad: (inout [String: JSONValue]) -> Void = { _ in }
    ) -> String {
        var media = Self.media
        editMedia(&media)
        var load: [String: JSONValue] = [
            "type": "LOAD", "requestId": 1, "autoplay": true, "currentTime": 0, "media": .object(media),
        ]
        editLoad(&load)
        return compact(load)
    }

    /// A LOAD whose media has `tracks` (each edited by `editTrack`) and optionally a style.
    static func loadWithTracks(
        _ tracks: [[String: JSONValue]], style: [String: JSONValue]? = nil, activeTrackIDs: [Int]? = nil
    ) -> String {
        load(
            media: { media in
                media["tracks"] = .array(tracks.map { .object($0) })
                if let style { media["textTrackStyle"] = .object(style) }
            },
            load: { load in
                if let activeTrackIDs { load["activeTrackIds"] = .array(activeTrackIDs.map { JSONValue($0) }) }
            })
    }

    static func track(_ base: [String: JSONValue] = englishSubtitles, _ edit: (inout [String: JSONValue]) -> Void)
        -> [String: JSONValue]
    {
        var track = base
        edit(&track)
        return track
    }

    static func styled(_ edit: (inout [String: JSONValue]) -> Void) -> String {
        var style = Self.style
        edit(&style)
        return loadWithTracks([englishSubtitles], style: style)
    }

    /// A queue item for episode `number` of a series.
    static func item(_ number: Int, edit: (inout [String: JSONValue]) -> Void = { _ in }) -> [String: JSONValue] {
        var item: [String: JSONValue] = [
            "autoplay": true,
            "preloadTime": 20,
            "media": [
                "contentId": .string("https://media.example.com/series/open-movies/episode-\(number).mp4"),
                "contentType": "video/mp4",
                "streamType": "BUFFERED",
                "duration": 734.5,
                "metadata": [
                    "metadataType": 2,
                    "seriesTitle": "Open Movies",
                    "title": .string("Episode \(number)"),
                    "season": 1,
                    "episode": JSONValue(number),
                    "originalAirdate": "2012-05-01",
                    "images": [
                        [
                            "url": .string(
                                "https://media.example.com/series/open-movies/episode-\(number)-480x270.jpg"),
                            "width": 480, "height": 270,
                        ]
                    ],
                ],
            ],
        ]
        edit(&item)
        return item
    }

    static func queueLoad(_ items: [[String: JSONValue]], edit: (inout [String: JSONValue]) -> Void = { _ in })
        -> String
    {
        var message: [String: JSONValue] = [
            "type": "QUEUE_LOAD", "requestId": 4, "items": .array(items.map { .object($0) }), "startIndex": 0,
            "repeatMode": "REPEAT_OFF",
        ]
        edit(&message)
        return compact(message)
    }

    static func queueInsert(_ items: [[String: JSONValue]]) -> String {
        compact([
            "type": "QUEUE_INSERT", "requestId": 5, "mediaSessionId": 1, "items": .array(items.map { .object($0) }),
        ])
    }

    static func launch(_ edit: (inout [String: JSONValue]) -> Void = { _ in }) -> String {
        var message: [String: JSONValue] = [
            "type": "LAUNCH", "requestId": 2, "appId": "CC1AD845", "language": "en-US",
            "supportedAppTypes": ["WEB", "ANDROID_TV"],
        ]
        edit(&message)
        return compact(message)
    }

    /// A QueueItem value with realistic metadata, for the planner.
    static func queueItem(_ number: Int) -> QueueItem {
        var media = MediaInformation(
            contentID: "https://media.example.com/library/tracks/\(number).m4a", contentType: "audio/mp4",
            streamType: .buffered,
            duration: 180 + Double(number % 120))
        var metadata = MediaMetadata(metadataType: .musicTrack, title: "Track \(number)")
        metadata.artist = "The Example Ensemble"
        metadata.albumName = "Collected Recordings, Volume \(number / 20 + 1)"
        metadata.trackNumber = number % 20 + 1
        metadata.images = [
            CastImage(url: "https://media.example.com/library/covers/\(number / 20).jpg", width: 600, height: 600)
        ]
        media.metadata = metadata
        return QueueItem(
            media: media, autoplay: true, preloadTime: 10, customData: ["libraryId": .string("track-\(number)")])
    }
}
