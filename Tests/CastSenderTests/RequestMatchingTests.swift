import CastModel
import CastSender
import JSONSupport
import Testing

@Suite("Replies are matched by requestId")
struct RequestMatchingTests {
    @Test("requestIds are positive, increasing and never repeat, across the platform and the app")
    func requestIDAllocation() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        try await sender.pause()
        try await sender.setVolume(0.5)
        try await sender.play()
        let ids = await device.received.compactMap(\.requestID)
        #expect(ids.count == (await device.received.count))
        #expect(ids.allSatisfy { $0 > 0 })
        #expect(ids == ids.sorted())
        #expect(Set(ids).count == ids.count)
    }

    @Test("replies that arrive in reverse order reach the request that carries their id")
    func outOfOrderReplies() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        await device.setRule { request in
            ["SEEK", "SET_VOLUME", "GET_STATUS"].contains(request.type) ? .hold : .standard
        }
        async let seek = sender.seek(to: 100)
        async let volume = sender.setVolume(0.25)
        async let status = sender.receiverStatus()
        #expect(await eventually { await device.heldCount == 3 })
        await device.releaseHeld(reversed: true)
        let (seekStatus, volumeLevel, receiver) = try await (seek, volume, status)
        // Each caller got the reply to its own request, not the first one to come back.
        #expect(seekStatus?.currentTime == 100)
        #expect(volumeLevel?.level == 0.25)
        #expect(receiver.applications?.first?.appID == "CC1AD845")
    }

    @Test("a reply addressed to '*' still answers the request")
    func broadcastAddressedReply() async throws {
        let (device, sender) = try await launchedSender()
        let status = try await sender.load(Fixture.load)
        // The scripted device addresses every media reply to "*", as real devices often do.
        #expect(status?.mediaSessionID == 1)
        #expect(await device.received(type: "LOAD").count == 1)
    }

    @Test("no reply within the timeout throws sender.timeout naming the request; a late reply is harmless")
    func timeout() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        await sender.reconfigure { $0.requestTimeout = .milliseconds(150) }
        await device.setRule { $0.type == "PAUSE" ? .hold : .standard }
        let clock = ContinuousClock()
        let start = clock.now
        let error = await senderError { try await sender.pause() }
        let elapsed = clock.now - start
        #expect(error?.code == CastSenderError.Code.timeout)
        #expect(error?.message.contains("PAUSE") == true)
        #expect(error?.message.contains("150 ms") == true)
        #expect(elapsed >= .milliseconds(150))
        // The late reply still updates the state (it is a status), and nothing breaks.
        await device.releaseHeld()
        #expect(await eventually { await sender.state.media?.playerState == .paused })
        await sender.reconfigure { $0.requestTimeout = .seconds(60) }
        try await sender.play()
        #expect(await sender.state.media?.playerState == .playing)
    }

    @Test("a device error reply fails only the request it names")
    func errorMatchesItsRequest() async throws {
        let (device, sender) = try await launchedSender()
        try await sender.load(Fixture.load)
        await device.setRule { request in
            guard request.type == "SEEK", let id = request.requestID else { return .standard }
            return .reply([["type": "INVALID_PLAYER_STATE", "requestId": JSONValue(id)]])
        }
        async let seek = senderError { _ = try await sender.seek(to: 5) }
        async let pause = sender.pause()
        let (seekError, paused) = await (seek, try pause)
        #expect(seekError?.code == "device.invalid-player-state")
        #expect(seekError?.explanation?.command == "castprep status")
        #expect(paused?.playerState == .paused)
    }

    @Test("a reply before the sender starts waiting is not lost")
    func earlyReply() async throws {
        // The in-memory device answers inside `send`, before the sender awaits the reply.
        let (_, sender) = try await launchedSender()
        for _ in 0..<20 { try await sender.receiverStatus() }
        #expect(await sender.state.connection == .connected)
    }

    @Test("cancelling a waiting request ends it without a reply")
    func cancellation() async throws {
        let (device, sender) = try await launchedSender()
        await device.setRule { $0.type == "GET_STATUS" ? .ignore : .standard }
        let task = Task { try await sender.receiverStatus() }
        #expect(await eventually { await device.received(type: "GET_STATUS").count >= 3 })
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }
    }
}
