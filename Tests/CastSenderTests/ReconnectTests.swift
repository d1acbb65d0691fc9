import CastModel
import CastSender
import JSONSupport
import Testing

@Suite("Reconnecting")
struct ReconnectTests {
    @Test("after a drop the sender reconnects and resumes the running session without a new LOAD")
    func resumeWithoutReload() async throws {
        let (device, sender) = try await launchedSender()
        let events = await sender.events()
        try await sender.load(Fixture.load)
        let session = try #require(await sender.state.session)
        let before = await device.received.count

        await device.dropLink()
        #expect(await eventually { await isConnected(sender, links: 2, on: device) })
        // The media state survives; the session id is the same.
        #expect(await sender.state.media?.mediaSessionID == 1)
        #expect(await sender.state.session == session)

        let afterDrop = await device.received.dropFirst(before).map {
            "\($0.link) \($0.message.destinationID) \($0.type)"
        }
        #expect(afterDrop == ["2 receiver-0 GET_STATUS", "2 \(session.transportID) GET_STATUS"])
        let virtual = await device.virtualEvents.filter { $0.link == 2 }
        #expect(virtual.map(\.to) == ["receiver-0", session.transportID])

        // Control continues on the same media session.
        let paused = try await sender.pause()
        #expect(paused?.playerState == .paused)
        #expect(await device.received(type: "PAUSE").first?.json["mediaSessionId"] == 1)
        #expect(await device.received(type: "LOAD").count == 1)
        #expect(await device.received(type: "LAUNCH").count == 1)

        await sender.close()
        var states: [String] = []
        var resumed = 0
        for await event in events {
            if case .connectionChanged(let state) = event { states.append(state.description) }
            if case .sessionResumed = event { resumed += 1 }
        }
        #expect(states == ["reconnecting (attempt 1)", "connected", "closed"])
        #expect(resumed == 1)
    }

    @Test("refused connections are retried with growing delays until one succeeds")
    func backoff() async throws {
        let policy = ReconnectPolicy(
            initialDelay: .milliseconds(20), multiplier: 2, maximumDelay: .milliseconds(60), maximumAttempts: 6)
        let (device, sender) = try await launchedSender(configuration: fastConfiguration(reconnect: policy))
        try await sender.load(Fixture.load)
        let events = await sender.events()
        await device.refuseConnections(3)
        let clock = ContinuousClock()
        let start = clock.now
        await device.dropLink()
        #expect(await eventually { await isConnected(sender, links: 2, on: device) })
        let elapsed = clock.now - start
        // Waits of 20 + 40 + 60 + 60 ms before the fourth attempt succeeds.
        #expect(elapsed >= .milliseconds(180))
        #expect(await sender.state.media?.mediaSessionID == 1)
        await sender.close()
        var attempts: [Int] = []
        for await event in events {
            if case .connectionChanged(.reconnecting(let attempt)) = event { attempts.append(attempt) }
        }
        #expect(attempts == [1, 2, 3, 4])
    }

    @Test("a request waiting during a drop fails with connection-lost; one sent while reconnecting waits for the link")
    func requestsDuringDrop() async throws {
        let policy = ReconnectPolicy(
            initialDelay: .milliseconds(5), maximumDelay: .milliseconds(5), maximumAttempts: nil)
        let (device, sender) = try await launchedSender(configuration: fastConfiguration(reconnect: policy))
        try await sender.load(Fixture.load)
        await device.refuseConnections(Int.max)
        await device.setRule { request in request.type == "SEEK" && request.link == 1 ? .dropAfterHandling : .standard }
        let lost = await senderError { _ = try await sender.seek(to: 60) }
        #expect(lost?.code == CastSenderError.Code.connectionLost)
        // Sent while the device refuses connections: it waits instead of failing.
        let pause = Task { try await sender.pause() }
        #expect(await eventually { await device.connectionAttempts >= 3 })
        if case .reconnecting = await sender.state.connection {
        } else {
            Issue.record("expected the sender to be reconnecting")
        }
        #expect(await device.received(type: "PAUSE").isEmpty)
        await device.refuseConnections(0)
        let status = try await pause.value
        #expect(status?.playerState == .paused)
        #expect(await device.received(type: "PAUSE").first?.link == 2)
        // The seek had been applied before the drop; the resumed status shows it.
        #expect(status?.currentTime == 60)
    }

    @Test("when every attempt fails the sender reports failed, waiting requests end, and connect() starts over")
    func givingUp() async throws {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(2), maximumDelay: .milliseconds(4), maximumAttempts: 3)
        let (device, sender) = try await launchedSender(configuration: fastConfiguration(reconnect: policy))
        try await sender.load(Fixture.load)
        await device.refuseConnections(3)
        await device.dropLink()
        #expect(
            await eventually {
                if case .failed = await sender.state.connection { return true }
                return false
            })
        let error = await senderError { _ = try await sender.play() }
        #expect(error?.code == CastSenderError.Code.reconnectFailed)
        try await sender.connect()
        #expect(await sender.state.session != nil)
        #expect(try await sender.play()?.playerState == .playing)
        #expect(await device.received(type: "LOAD").count == 1)
    }

    @Test("with reconnecting turned off a drop fails the sender")
    func neverReconnect() async throws {
        let (device, sender) = try await launchedSender(configuration: fastConfiguration(reconnect: .never))
        await device.dropLink()
        #expect(
            await eventually {
                if case .failed = await sender.state.connection { return true }
                return false
            })
        #expect(await device.linkCount == 1)
    }

    @Test("an app that went away while the link was down ends the session instead of resuming it")
    func appGoneDuringDrop() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        await device.setRule { request in
            // The first platform GET_STATUS on the new link: the app has stopped meanwhile.
            if request.link == 2, request.type == "GET_STATUS", request.message.destinationID == "receiver-0",
                let id = request.requestID
            {
                return .reply([
                    ["type": "RECEIVER_STATUS", "requestId": JSONValue(id), "status": ["volume": ["level": 1]]]
                ])
            }
            return .standard
        }
        await device.dropLink()
        #expect(await eventually { await isConnected(sender, links: 2, on: device) })
        #expect(await sender.state.session == nil)
        #expect(await sender.state.media == nil)
    }

    @Test("close() while reconnecting stops the attempts for good")
    func closeWhileReconnecting() async throws {
        let policy = ReconnectPolicy(
            initialDelay: .milliseconds(10), maximumDelay: .milliseconds(10), maximumAttempts: nil)
        let (device, sender) = try await launchedSender(configuration: fastConfiguration(reconnect: policy))
        await device.refuseConnections(Int.max)
        await device.dropLink()
        #expect(await eventually { await device.connectionAttempts >= 4 })
        await sender.close()
        let attempts = await device.connectionAttempts
        try await Task.sleep(for: .milliseconds(100))
        #expect(await device.connectionAttempts <= attempts + 1)  // at most the attempt already under way
        #expect(await sender.state.connection == .closed)
    }

    @Test("close() ends the listeners and refuses further work")
    func closing() async throws {
        let (device, sender) = try await launchedSender()
        let session = try #require(await sender.state.session)
        let events = await sender.events()
        await sender.close()
        for await _ in events {}
        let closes = await device.virtualEvents.filter { $0.action == .close }.map(\.to)
        #expect(closes == [session.transportID, "receiver-0"])
        let error = await senderError { _ = try await sender.receiverStatus() }
        #expect(error?.code == CastSenderError.Code.closed)
    }

    @Test(
        "the backoff doubles up to the maximum",
        arguments: [
            (1, 500), (2, 1_000), (3, 2_000), (4, 4_000), (6, 16_000), (7, 30_000), (20, 30_000),
        ])
    func policyDelays(attempt: Int, milliseconds: Int) {
        #expect(ReconnectPolicy().delay(beforeAttempt: attempt) == .milliseconds(milliseconds))
    }
}
