import CastModel
import CastSender
import JSONSupport
import Testing

/// Settings that keep tests fast: reconnect attempts a few milliseconds apart.
///
/// The request timeout stays long: the whole test run shares two cooperative threads, and a
/// busy neighbour suite must not turn a slow reply into a timeout. Tests about timeouts set
/// their own.
func fastConfiguration(
    requestTimeout: Duration = .seconds(60),
    reconnect: ReconnectPolicy = ReconnectPolicy(
        initialDelay: .milliseconds(5), multiplier: 2, maximumDelay: .milliseconds(40), maximumAttempts: 6)
) -> CastSenderConfiguration {
    CastSenderConfiguration(
        requestTimeout: requestTimeout, loadTimeout: requestTimeout, launchTimeout: requestTimeout,
        reconnect: reconnect)
}

/// A device and a sender connected to it.
func makeSender(
    device: ScriptedDevice = ScriptedDevice(), configuration: CastSenderConfiguration = fastConfiguration()
) -> (ScriptedDevice, CastSender) {
    let sender = CastSender(
        endpoint: CastEndpoint(host: "127.0.0.1"), transportFactory: DeviceLinkFactory(device: device),
        configuration: configuration)
    return (device, sender)
}

/// A connected sender with the Default Media Receiver launched.
func launchedSender(configuration: CastSenderConfiguration = fastConfiguration()) async throws -> (
    ScriptedDevice, CastSender
) {
    let (device, sender) = makeSender(configuration: configuration)
    try await sender.connect()
    try await sender.launch()
    return (device, sender)
}

/// Polls `condition` every 5 ms until it holds, up to `polls` times.
///
/// Counting polls rather than wall time keeps the wait fair when other suites keep the
/// cooperative threads busy: the sender gets as many turns as the poll does.
func eventually(polls: Int = 4_000, _ condition: () async -> Bool) async -> Bool {
    for _ in 0..<polls {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return await condition()
}

/// Whether the sender is connected again and the device has seen `links` connections.
func isConnected(_ sender: CastSender, links: Int, on device: ScriptedDevice) async -> Bool {
    let connected = await sender.state.connection == .connected
    let count = await device.linkCount
    return connected && count == links
}

/// Catches a `CastSenderError`, recording an issue when something else (or nothing) is thrown.
func senderError(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async
    -> CastSenderError?
{
    do {
        try await body()
        Issue.record("expected a CastSenderError, nothing was thrown", sourceLocation: sourceLocation)
    } catch let error as CastSenderError {
        return error
    } catch {
        Issue.record("expected a CastSenderError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

enum Fixture {
    static let mediaURL = "https://media.example.com/films/sintel.m3u8"

    static let tracks: [MediaTrack] = [
        MediaTrack(
            trackID: 1, type: .text, trackContentID: "https://media.example.com/films/sintel.en.vtt",
            trackContentType: "text/vtt", subtype: .subtitles, name: "English", language: "en-US"),
        MediaTrack(
            trackID: 2, type: .text, trackContentID: "https://media.example.com/films/sintel.fr-desc.vtt",
            trackContentType: "text/vtt", subtype: .descriptions, name: "Français (description)", language: "fr"),
        MediaTrack(
            trackID: 3, type: .text, trackContentID: "https://media.example.com/films/sintel.fr.vtt",
            trackContentType: "text/vtt", subtype: .subtitles, name: "Français", language: "fr"),
        MediaTrack(
            trackID: 4, type: .text, trackContentID: "https://media.example.com/films/sintel.de.vtt",
            trackContentType: "text/vtt", subtype: .chapters, name: "Kapitel", language: "de"),
        MediaTrack(trackID: 10, type: .audio, trackContentID: "audio-en", name: "English", language: "en"),
    ]

    static let style = TextTrackStyle(
        foregroundColor: "#FFFF00FF", backgroundColor: "#00000080", edgeColor: "#000000FF", edgeType: .outline,
        fontScale: 1.2, fontGenericFamily: .sansSerif, fontStyle: .bold, windowType: TextTrackWindowType.none)

    /// An HLS film with captions, artwork and metadata that passes every validator rule.
    static var media: MediaInformation {
        var media = MediaInformation(
            contentID: mediaURL, contentType: "application/x-mpegurl", streamType: .buffered,
            duration: 888, tracks: tracks)
        media.hlsSegmentFormat = .fmp4
        media.hlsVideoSegmentFormat = .fmp4
        var metadata = MediaMetadata(metadataType: .movie, title: "Sintel")
        metadata.studio = "Blender Foundation"
        metadata.images = [CastImage(url: "https://media.example.com/films/sintel.jpg", width: 480, height: 270)]
        media.metadata = metadata
        return media
    }

    static var load: LoadRequest {
        LoadRequest(
            media: media, autoplay: true, currentTime: 12, activeTrackIDs: [1, 10], credentials: "token-123",
            credentialsType: .web)
    }

    /// Queue item `index`: a short film with artwork and a caption track, about 600 bytes of JSON.
    static func queueItem(_ index: Int) -> QueueItem {
        let base = "https://media.example.com/catalog/episode-\(index)"
        var media = MediaInformation(
            contentID: "\(base).mp4", contentType: "video/mp4", streamType: .buffered,
            duration: Double(600 + index))
        var metadata = MediaMetadata(metadataType: .tvShow, title: "Episode \(index)")
        metadata.seriesTitle = "The Long Catalogue"
        metadata.season = 1 + index / 100
        metadata.episode = 1 + index % 100
        metadata.images = [CastImage(url: "\(base).jpg", width: 480, height: 270)]
        media.metadata = metadata
        media.tracks = [
            MediaTrack(
                trackID: 1, type: .text, trackContentID: "\(base).en.vtt", trackContentType: "text/vtt",
                subtype: .subtitles, name: "English", language: "en")
        ]
        return QueueItem(media: media, autoplay: true, preloadTime: 10, activeTrackIDs: [1])
    }
}

extension JSONValue {
    /// Parses JSON text in a test.
    static func parse(_ text: String) throws -> JSONValue { try JSONParser().parse(text).value }
}
