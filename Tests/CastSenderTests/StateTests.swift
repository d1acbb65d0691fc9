import CastModel
import CastSender
import JSONSupport
import Testing

@Suite("One current state from replies and broadcasts")
struct StateTests {
    @Test("partial MEDIA_STATUS broadcasts are merged: media, tracks and queue survive updates that leave them out")
    func broadcastMerging() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        let full = try #require(await sender.state.media)
        #expect(full.media?.tracks?.count == Fixture.tracks.count)
        let session = try #require(full.mediaSessionID)

        // Devices send requestId-0 updates with only what changed.
        await device.broadcast(
            try .parse(
                #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"mediaSessionId":\#(session),"playerState":"BUFFERING","currentTime":30.5}]}"#
            ))
        #expect(await eventually { await sender.state.media?.playerState == .buffering })
        var merged = try #require(await sender.state.media)
        #expect(merged.currentTime == 30.5)
        #expect(merged.media == full.media)
        #expect(merged.activeTrackIDs == [1, 10])
        #expect(merged.currentItemID == full.currentItemID)

        // An update without a session id applies to the current session too.
        await device.broadcast(
            try .parse(
                #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"playerState":"PLAYING","activeTrackIds":[3,10]}]}"#))
        #expect(await eventually { await sender.state.media?.playerState == .playing })
        merged = try #require(await sender.state.media)
        #expect(merged.activeTrackIDs == [3, 10])
        #expect(merged.currentTime == 30.5)
        #expect(merged.media?.contentID == Fixture.mediaURL)

        // The end: IDLE with a reason; the reason describes that moment only.
        await device.broadcast(
            try .parse(
                #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"mediaSessionId":\#(session),"playerState":"IDLE","idleReason":"FINISHED"}]}"#
            ))
        #expect(await eventually { await sender.state.media?.idleReason == .finished })
        await device.broadcast(
            try .parse(
                #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"mediaSessionId":\#(session),"playerState":"IDLE"}]}"#
            ))
        #expect(await eventually { await sender.state.media?.idleReason == nil })
        #expect(await sender.state.media?.media?.contentID == Fixture.mediaURL)
    }

    @Test("a status with a new mediaSessionId replaces the old session instead of merging into it")
    func newSessionReplaces() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        await device.broadcast(
            try .parse(
                #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"mediaSessionId":77,"playerState":"PLAYING","media":{"contentId":"https://other.example/x.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}]}"#
            ))
        #expect(await eventually { await sender.state.media?.mediaSessionID == 77 })
        let media = try #require(await sender.state.media)
        #expect(media.activeTrackIDs == nil)
        #expect(media.media?.tracks == nil)
        #expect(media.media?.contentID == "https://other.example/x.mp4")
    }

    @Test("an empty status list means no media session")
    func emptyStatus() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        await device.broadcast(try .parse(#"{"type":"MEDIA_STATUS","requestId":0,"status":[]}"#))
        #expect(await eventually { await sender.state.media == nil })
        let error = await senderError { _ = try await sender.pause() }
        #expect(error?.code == CastSenderError.Code.noMediaSession)
    }

    @Test("listeners see connection, session, media and queue changes in order")
    func listenerEvents() async throws {
        let (device, sender) = makeSender()
        let events = await sender.events()
        try await sender.connect()
        try await sender.launch()
        _ = try await sender.queueLoad(items: (0..<5).map(Fixture.queueItem))
        try await sender.next()
        await device.closeAppConnection()
        #expect(await eventually { await sender.state.session == nil })
        await sender.close()

        var seen: [String] = []
        for await event in events {
            switch event {
            case .connectionChanged(let state): seen.append("connection \(state)")
            case .sessionChanged(let session):
                seen.append(session == nil ? "session ended" : "session \(session?.appID ?? "")")
            case .queueChanged(let queue): seen.append("queue current \(queue.currentItemID.map(String.init) ?? "-")")
            case .queueCastProgress(let progress):
                seen.append("progress \(progress.deliveredItems)/\(progress.totalItems)")
            case .mediaStatusChanged(let status): seen.append(status == nil ? "media none" : "media")
            case .receiverStatusChanged: seen.append("receiver")
            default: break
            }
        }
        let expected = [
            "connection connecting", "receiver", "connection connected", "receiver", "receiver", "session CC1AD845",
            "media", "queue current 1", "progress 5/5", "media", "queue current 2", "session ended", "media none",
            "connection closed",
        ]
        #expect(seen.filter { !$0.hasPrefix("receiver") } == expected.filter { !$0.hasPrefix("receiver") })
        #expect(seen.contains("receiver"))
    }

    @Test("a RECEIVER_STATUS without the app ends the session")
    func appGoneFromStatus() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        await device.broadcast(
            try .parse(#"{"type":"RECEIVER_STATUS","requestId":0,"status":{"volume":{"level":0.3,"muted":false}}}"#),
            namespace: .receiver)
        #expect(await eventually { await sender.state.session == nil })
        #expect(await sender.state.media == nil)
        #expect(await sender.state.deviceVolume?.level == 0.3)
        let error = await senderError { _ = try await sender.play() }
        #expect(error?.code == CastSenderError.Code.noSession)
    }

    @Test("malformed and oversized messages are dropped with an event, never crash the sender")
    func untrustedInput() async throws {
        let configuration = CastSenderConfiguration(
            requestTimeout: .seconds(60), reconnect: .never, maximumIncomingPayloadBytes: 4_096)
        let (device, sender) = makeSender(configuration: configuration)
        let events = await sender.events()
        try await sender.connect()
        try await sender.launch()
        await device.broadcast(.string("not an object"))
        await device.broadcast(.object(["type": .string(String(repeating: "x", count: 5_000))]))
        await device.broadcast(try .parse(#"{"type":"MEDIA_STATUS","requestId":"seven","status":{"oops":1}}"#))
        await device.broadcast(try .parse(#"{"type":"LOAD_FAILED","requestId":-3}"#))
        try await sender.receiverStatus()
        await sender.close()
        var ignored = 0
        var errors = 0
        for await event in events {
            if case .ignoredMessage = event { ignored += 1 }
            if case .deviceError = event { errors += 1 }
        }
        #expect(ignored == 3)
        #expect(errors == 1)
    }
}
