import CastModel
import CastReceiver
import CastReceiverRuntime
import CastSender
import Foundation
import MediaServer
import Testing
import TestSupport

/// The sender library over the real CASTV2 channel transport, against the emulator: a link
/// that drops is reconnected and the running session taken back, with no second LOAD.
@Suite("CastSender over the channel transport", .serialized)
struct ResumeTests {
    @Test("a dropped connection is resumed without a reload: same media session, one LOAD, controls work again")
    func droppedConnectionResumes() async throws {
        let (server, endpoint) = try SampleServer.start()
        defer { server.stop() }
        let device = try await EmulatedDevice.start()
        let sender = CastSender(
            endpoint: CastEndpoint(host: "127.0.0.1", port: device.endpoints.castPort),
            transportFactory: ChannelTransportFactory(),
            configuration: CastSenderConfiguration(
                reconnect: ReconnectPolicy(initialDelay: .milliseconds(100), maximumDelay: .seconds(1))))
        let events = await sender.events()
        try await sender.connect()
        try await sender.launch()
        var media = MediaInformation(contentID: endpoint.url(forPath: "h264-aac-faststart.mp4"), streamType: .buffered)
        media.contentType = "video/mp4"
        _ = try await sender.load(LoadRequest(media: media, autoplay: false))
        let sessionID = try #require(await sender.state.media?.mediaSessionID)

        // The device closes this sender's socket after its next answered message.
        await device.emulator.setFaults(ReceiverFaults(dropConnectionAfterMessages: 1))
        _ = try? await sender.mediaStatus()
        await device.emulator.setFaults(ReceiverFaults())
        var resumed = false
        for await event in events {
            if case .sessionResumed = event {
                resumed = true
                break
            }
        }
        #expect(resumed)
        #expect(await sender.state.media?.mediaSessionID == sessionID, "the same media session, not a new load")
        _ = try await sender.play()
        try await device.waitUntil("playback resumes after the reconnect") { $0.mediaStatus?.playerState == .playing }
        #expect(device.received("LOAD").count == 1)
        #expect(
            device.log.filter { $0.note?.hasPrefix("connection from 127.0.0.1:") == true }.count >= 2,
            "a second socket was opened")
        await sender.close()
        await device.stop()
    }
}
