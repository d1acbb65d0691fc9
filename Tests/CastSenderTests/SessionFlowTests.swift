import CastModel
import CastSender
import JSONSupport
import Testing

@Suite("Connect, launch, join, load")
struct SessionFlowTests {
    @Test("launch → connect → load → status: the exact sequence on the wire")
    func launchConnectLoad() async throws {
        let (device, sender) = makeSender()
        let receiver = try await sender.connect()
        #expect(receiver.applications == nil)
        let session = try await sender.launch()
        #expect(session.appID == "CC1AD845")
        #expect(session.transportID.count == 36)
        let status = try #require(try await sender.load(Fixture.load))
        #expect(status.playerState == .playing)
        #expect(status.currentTime == 12)
        #expect(status.activeTrackIDs == [1, 10])
        #expect(status.media?.contentID == Fixture.mediaURL)

        let virtual = await device.virtualEvents
        #expect(
            virtual == [
                .init(action: .connect, from: "sender-0", to: "receiver-0", link: 1),
                .init(action: .connect, from: "sender-0", to: session.transportID, link: 1),
            ])
        let traffic = await device.received.map { "\($0.message.destinationID) \($0.type)" }
        #expect(
            traffic == [
                "receiver-0 GET_STATUS", "receiver-0 LAUNCH", "\(session.transportID) GET_STATUS",
                "\(session.transportID) LOAD",
            ])
        let load = try #require(await device.received(type: "LOAD").first)
        #expect(load.json["credentials"] == "token-123")
        #expect(load.json["credentialsType"] == "web")
        #expect(load.json["autoplay"] == true)
        #expect(load.json["media"]?["tracks"]?.arrayValue?.count == Fixture.tracks.count)
    }

    @Test("Cast Connect: LAUNCH carries supportedAppTypes and credentialsData")
    func castConnectLaunch() async throws {
        let (device, sender) = makeSender()
        try await sender.connect()
        let session = try await sender.launch(
            appID: "ABCD1234", supportedAppTypes: [.web, .androidTV],
            credentialsData: CredentialsData(credentials: "user-token", credentialsType: .android), language: "en-US")
        #expect(session.appType == "ANDROID_TV")
        let launch = try #require(await device.received(type: "LAUNCH").first)
        var request = launch.json.objectValue ?? [:]
        request["requestId"] = nil
        #expect(
            JSONValue.object(request)
                == (try .parse(
                    #"{"type":"LAUNCH","appId":"ABCD1234","language":"en-US","supportedAppTypes":["WEB","ANDROID_TV"],"credentialsData":{"credentials":"user-token","credentialsType":"android"}}"#
                )))
    }

    @Test("launching an app that already runs joins it instead of restarting it")
    func launchJoinsRunningApp() async throws {
        let device = ScriptedDevice()
        await device.startAppAsAnotherSender(media: Fixture.media.jsonValue)
        let (_, sender) = makeSender(device: device)
        try await sender.connect()
        try await sender.launch()
        #expect(await device.received(type: "LAUNCH").isEmpty)
        #expect(await sender.state.media?.mediaSessionID == 1)
    }

    @Test("join a session another sender started: CONNECT to its transportId, GET_STATUS, then control it")
    func joinExistingSession() async throws {
        let device = ScriptedDevice()
        await device.startAppAsAnotherSender(media: Fixture.media.jsonValue)
        let (_, sender) = makeSender(device: device)
        try await sender.connect()
        let session = try await sender.join()
        let media = try #require(await sender.state.media)
        #expect(media.mediaSessionID == 1)
        #expect(media.currentTime == 42)
        let paused = try await sender.pause()
        #expect(paused?.playerState == .paused)
        let pause = try #require(await device.received(type: "PAUSE").first)
        #expect(pause.json["mediaSessionId"] == 1)
        #expect(pause.message.destinationID == session.transportID)
        #expect(
            await device.virtualEvents.contains(
                .init(action: .connect, from: "sender-0", to: session.transportID, link: 1)))
    }

    @Test("join with nothing running says so and names what runs")
    func joinNothing() async throws {
        let (_, sender) = makeSender()
        try await sender.connect()
        let error = await senderError { _ = try await sender.join() }
        #expect(error?.code == CastSenderError.Code.appNotRunning)
        let other = await senderError { _ = try await sender.join(appID: "ABCD1234") }
        #expect(other?.message.contains("ABCD1234") == true)
    }

    @Test("a LAUNCH answered before the app is up waits for the broadcast that announces it")
    func launchWaitsForBroadcast() async throws {
        let device = ScriptedDevice()
        await device.setAnnouncesLaunchLater(true)
        let (_, sender) = makeSender(device: device)
        try await sender.connect()
        let session = try await sender.launch()
        #expect(session.appID == "CC1AD845")
        #expect(await sender.state.session == session)
    }

    @Test("a LAUNCH answered only by a requestId-0 broadcast still completes")
    func launchAnsweredByBroadcast() async throws {
        let device = ScriptedDevice()
        await device.setAnswersLaunchByBroadcastOnly(true)
        let (_, sender) = makeSender(device: device)
        try await sender.connect()
        // Without the broadcast completing it, the LAUNCH would end in sender.timeout.
        let session = try await sender.launch()
        #expect(session.appID == "CC1AD845")
        #expect(await device.received(type: "LAUNCH").count == 1)
    }

    @Test(
        "LAUNCH_ERROR is thrown with its explanation",
        arguments: [
            ("NOT_FOUND", "castprep validate REQUEST.json"),
            ("CANCELLED", nil),
            ("BAD_PARAMETER", "castprep validate REQUEST.json"),
            ("SYSTEM_ERROR", nil),
            ("USER_NOT_ALLOWED", nil),
            ("SOMETHING_NEW", "castprep validate REQUEST.json"),  // unknown reasons still get a generic explanation
        ] as [(String, String?)])
    func launchError(reason: String, command: String?) async throws {
        let (device, sender) = makeSender()
        try await sender.connect()
        await device.setRule { request in
            guard request.type == "LAUNCH", let id = request.requestID else { return .standard }
            let key = reason.hasPrefix("USER_") ? "extendedError" : "reason"
            return .reply([["type": "LAUNCH_ERROR", "requestId": JSONValue(id), key: .string(reason)]])
        }
        let error = await senderError { _ = try await sender.launch() }
        #expect(error?.code == "device.launch-error")
        #expect(error?.explanation?.reason == reason)
        #expect(error?.explanation?.command == command)
        #expect(error?.explanation?.title.isEmpty == false)
        #expect(await sender.state.session == nil)
    }

    @Test("an unknown app id is refused by the device with NOT_FOUND and explained")
    func unknownApp() async throws {
        let (_, sender) = makeSender()
        try await sender.connect()
        let error = await senderError { _ = try await sender.launch(appID: "0BADBEEF") }
        #expect(error?.explanation?.title == "The device does not know this app id")
    }

    @Test("stopApp ends the session on the device")
    func stopApp() async throws {
        let (device, sender) = try await launchedSender()
        let session = try #require(await sender.state.session)
        try await sender.stopApp()
        #expect(await sender.state.session == nil)
        let stop = try #require(await device.received(type: "STOP").first)
        #expect(stop.json["sessionId"] == .string(session.sessionID ?? ""))
        #expect(stop.message.destinationID == "receiver-0")
    }

    @Test("GET_APP_AVAILABILITY, whose reply has no type")
    func availability() async throws {
        let (_, sender) = makeSender()
        try await sender.connect()
        let result = try await sender.appAvailability(["CC1AD845", "0BADBEEF"])
        #expect(result == ["CC1AD845": true, "0BADBEEF": false])
    }

    @Test("media commands without a session or media explain what to do first")
    func missingSession() async throws {
        let (_, sender) = makeSender()
        try await sender.connect()
        let noSession = await senderError { _ = try await sender.load(Fixture.load) }
        #expect(noSession?.code == CastSenderError.Code.noSession)
        try await sender.launch()
        let noMedia = await senderError { _ = try await sender.seek(to: 3) }
        #expect(noMedia?.code == CastSenderError.Code.noMediaSession)
    }

    @Test("a sender that was never connected says so")
    func notConnected() async throws {
        let (_, sender) = makeSender()
        let error = await senderError { _ = try await sender.receiverStatus() }
        #expect(error?.code == CastSenderError.Code.notConnected)
    }
}
