import CastModel
import CastSender
import JSONSupport
import TestSupport
import Testing

@Suite("Control requests on the wire")
struct ControlRequestTests {
    @Test(
        "next, previous, seek, rate, volume, mute, captions by language, off, style, repeat: exact JSON (golden file)")
    func controlRequests() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        let before = await device.received.count

        try await sender.queueInsert([Fixture.queueItem(1), Fixture.queueItem(2)])
        try await sender.next()
        try await sender.previous()
        try await sender.seek(to: 42.5)
        try await sender.seek(by: -10, resumeState: .playbackPause)
        try await sender.play()
        try await sender.setPlaybackRate(1.5)
        try await sender.setVolume(0.35)
        try await sender.setMuted(true)
        try await sender.showCaptions(language: "fr")
        try await sender.showCaptions(language: "en")
        try await sender.hideCaptions()
        try await sender.setTextTrackStyle(Fixture.style)
        try await sender.setRepeatMode(.allAndShuffle)
        try await sender.pause()
        try await sender.stop()

        let lines = await device.received.dropFirst(before).map { request in
            var json = request.json.objectValue ?? [:]
            // requestIds and the app's transport id differ per run; everything else is fixed.
            json["requestId"] = json["requestId"] == nil ? nil : "<id>"
            let destination = request.message.destinationID == CastSender.platformID ? "receiver-0" : "app"
            return "\(destination) \(request.message.namespace.rawValue.split(separator: ".").last ?? "")\n"
                + JSONWriter.compact.string(from: .object(json))
        }
        Snapshot.assertMatches(lines.joined(separator: "\n") + "\n", named: "control-requests.txt")
    }

    @Test(
        "captions by language pick the best text track and keep the audio track",
        arguments: [
            ("fr", [10, 3]),  // subtitles win over the French descriptions track
            ("FR", [10, 3]),  // tags compare without case
            ("en", [10, 1]),  // the primary language finds en-US
            ("en_US", [10, 1]),  // an underscore is read as a hyphen
            ("en-GB", [10, 1]),  // a regional variant falls back to the language
        ])
    func captionsByLanguage(language: String, expected: [Int]) async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        try await sender.showCaptions(language: language)
        let edit = try #require(await device.received(type: "EDIT_TRACKS_INFO").last)
        #expect(edit.json["activeTrackIds"]?.arrayValue?.compactMap(\.intValue) == expected)
        #expect(await sender.state.media?.activeTrackIDs == expected)
    }

    @Test("a language without a caption track (chapters do not count) is refused with the languages there are")
    func captionsLanguageMissing() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        let error = await senderError { _ = try await sender.showCaptions(language: "de") }
        #expect(error?.code == CastSenderError.Code.trackNotFound)
        #expect(error?.fix == "available: en-US, fr, de")
        #expect(await device.received(type: "EDIT_TRACKS_INFO").isEmpty)
    }

    @Test("the validator blocks an invalid LOAD unless forced")
    func validatorBlocksLoad() async throws {
        let (device, sender) = try await launchedSender()
        var bad = Fixture.load
        bad.media?.contentType = nil
        bad.currentTime = -5
        bad.activeTrackIDs = [99]
        let error = await senderError { _ = try await sender.load(bad) }
        #expect(error?.code == CastSenderError.Code.requestInvalid)
        let codes = Set(error?.diagnostics.filter { $0.severity == .error }.map(\.code.rawValue) ?? [])
        #expect(codes.isSuperset(of: ["load.current-time-negative"]))
        #expect(codes.count >= 2)
        #expect(error?.message.hasPrefix("LOAD not sent: ") == true)
        #expect(await device.received(type: "LOAD").isEmpty)

        let forced = try await sender.load(bad, force: true)
        #expect(forced?.mediaSessionID == 1)
        #expect(await device.received(type: "LOAD").count == 1)
    }

    @Test("warnings do not block; listeners see them")
    func warningsPass() async throws {
        let (device, sender) = try await launchedSender()
        let events = await sender.events()
        try await sender.load(Fixture.load)
        try await sender.setPlaybackRate(3)  // outside 0.5–2: a warning, sent anyway
        await sender.close()
        var findings: [String] = []
        for await event in events {
            if case .validationFindings(let type, let list) = event {
                findings += list.map { "\(type) \($0.code.rawValue)" }
            }
        }
        #expect(findings.contains("SET_PLAYBACK_RATE load.playback-rate-range"))
        #expect(await device.received(type: "SET_PLAYBACK_RATE").count == 1)
    }

    @Test(
        "out-of-range commands are refused before sending",
        arguments: [
            "seek -1", "seek NaN", "rate 0", "volume 1.5", "volume -0.1", "style color",
        ])
    func refusedCommands(command: String) async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        let before = await device.received.count
        let error = await senderError {
            switch command {
            case "seek -1": _ = try await sender.seek(to: -1)
            case "seek NaN": _ = try await sender.seek(to: .nan)
            case "rate 0": _ = try await sender.setPlaybackRate(0)
            case "volume 1.5": _ = try await sender.setVolume(1.5)
            case "volume -0.1": _ = try await sender.setVolume(-0.1)
            default: _ = try await sender.setTextTrackStyle(TextTrackStyle(foregroundColor: "yellow"))
            }
        }
        #expect(error?.code == CastSenderError.Code.requestInvalid)
        #expect(error?.diagnostics.isEmpty == false)
        #expect(await device.received.count == before)
    }

    @Test(
        "the new request types read back what they write",
        arguments: [
            #"{"type":"SEEK","requestId":4,"mediaSessionId":2,"relativeTime":-10,"resumeState":"PLAYBACK_PAUSE","x":1}"#,
            #"{"type":"QUEUE_UPDATE","requestId":4,"mediaSessionId":2,"jump":-1,"repeatMode":"REPEAT_ALL","shuffle":true}"#,
            #"{"type":"QUEUE_REORDER","requestId":4,"mediaSessionId":2,"itemIds":[3,1],"insertBefore":2}"#,
            #"{"type":"QUEUE_REMOVE","requestId":4,"mediaSessionId":2,"itemIds":[3],"currentTime":5}"#,
            #"{"type":"SET_PLAYBACK_RATE","requestId":4,"mediaSessionId":2,"playbackRate":1.25}"#,
            #"{"type":"SET_VOLUME","requestId":4,"volume":{"muted":true}}"#,
            #"{"type":"STOP","requestId":4,"sessionId":"abc"}"#,
            #"{"type":"PAUSE","requestId":4,"mediaSessionId":2,"customData":{"k":[1,2]}}"#,
            #"{"type":"GET_APP_AVAILABILITY","requestId":4,"appId":["CC1AD845"]}"#,
            #"{"type":"QUEUE_GET_ITEM_IDS","requestId":4,"mediaSessionId":2}"#,
        ])
    func roundTrip(text: String) throws {
        let json = try JSONValue.parse(text)
        var diagnostics: [Diagnostic] = []
        let type = json["type"]?.stringValue
        let decoded: JSONValue? =
            switch type {
            case "SEEK": SeekRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            case "QUEUE_UPDATE": QueueUpdateRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            case "QUEUE_REORDER":
                QueueReorderRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            case "QUEUE_REMOVE": QueueRemoveRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            case "SET_PLAYBACK_RATE":
                SetPlaybackRateRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            case "SET_VOLUME":
                ReceiverSetVolumeRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            case "STOP": ReceiverStopRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            case "PAUSE": PauseRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            case "GET_APP_AVAILABILITY":
                AppAvailabilityRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            default: QueueGetItemIDsRequest.decode(from: json, at: .root, diagnostics: &diagnostics)?.jsonValue
            }
        #expect(decoded == json)
        #expect(diagnostics.isEmpty)
    }

    @Test("a request of the wrong type is reported")
    func wrongType() throws {
        var diagnostics: [Diagnostic] = []
        _ = SeekRequest.decode(
            from: try .parse(#"{"type":"PLAY","mediaSessionId":1}"#), at: .root, diagnostics: &diagnostics)
        #expect(diagnostics.map(\.code.rawValue) == ["message.type-mismatch"])
    }
}
