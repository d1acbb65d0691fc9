import CastChannel
import CastDiscovery
import CastModel
import CastReceiver
import CastReceiverRuntime
import CastTestSupport
import Foundation
import HTTPCheck
import JSONSupport
import MediaServer
import Synchronization
import Testing
import TestSupport

/// Log entries gathered from the emulator's threads.
final class LogCollector: Sendable {
    private let entries = Mutex<[ReceiverLogEntry]>([])
    func append(_ entry: ReceiverLogEntry) { entries.withLock { $0.append(entry) } }
    var items: [ReceiverLogEntry] { entries.withLock { $0 } }
}

/// An emulator on 127.0.0.1 with free ports and no advertisement, for one test.
func startEmulator(
    faults: ReceiverFaults = ReceiverFaults(), server: CastChannelServer.Options = ReceiverEmulator.deviceServerOptions,
    log: LogCollector? = nil
) async throws -> (ReceiverEmulator, ReceiverEmulator.Endpoints) {
    var configuration = ReceiverEmulator.Configuration(
        identity: DeviceIdentity(id: CastDeviceID("5f1e2d3c4b5a49688776655443322110")!, friendlyName: "Test TV"),
        bindAddress: "127.0.0.1",
        castPort: 0, httpPort: 0, receiver: ReceiverConfiguration(bufferingTime: .milliseconds(100), seed: 7),
        faults: faults,
        fetch: .init(loopbackIsReachable: true, requestTimeout: .seconds(2), totalTimeout: .seconds(30)), server: server
    )
    if let log { configuration.log = { log.append($0) } }
    let emulator = ReceiverEmulator(configuration: configuration)
    return (emulator, try await emulator.start())
}

extension ChannelMessage {
    var json: JSONValue { payloadJSON ?? .null }
    var mediaStates: [String] {
        (json["status"]?.arrayValue ?? []).compactMap { $0["playerState"]?.stringValue }
    }
}

/// CONNECT, LAUNCH of the Default Media Receiver and CONNECT to its transport; returns the transport id.
func launchDefaultMediaReceiver(_ sender: TestSender) async throws -> String {
    try await sender.connect(to: "receiver-0")
    let launch = try await sender.send(["type": "LAUNCH", "appId": "CC1AD845"], to: "receiver-0", namespace: .receiver)
    let status = try await sender.reply(to: launch)
    let transportID = try #require(status.json["status"]?["applications"]?[0]?["transportId"]?.stringValue)
    try await sender.connect(to: transportID)
    return transportID
}

@Suite("The emulator as a running device", .serialized)
struct EmulatorTests {
    @Test("CONNECT, GET_STATUS, LAUNCH, LOAD of media on loopback: the sender sees the statuses a device sends")
    func playsMedia() async throws {
        let media = MediaServer(
            configuration: MediaServerConfiguration(
                mounts: [.init(urlPrefix: "/", directory: Repository.root().appendingPathComponent("Samples").path)],
                bindAddress: "127.0.0.1", port: 0))
        let mediaEndpoint = try media.start()
        defer { media.stop() }
        let log = LogCollector()
        let (emulator, endpoints) = try await startEmulator(log: log)
        let sender = try await TestSender.connect(port: endpoints.castPort)
        try await sender.connect(to: "receiver-0")
        let status = try await sender.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        let idle = try await sender.reply(to: status)
        #expect(idle.json["type"] == "RECEIVER_STATUS")
        #expect(idle.json["status"]?["applications"] == nil, "nothing runs yet")
        let transportID = try await launchDefaultMediaReceiver(sender)
        let load = try await sender.send(
            [
                "type": "LOAD", "autoplay": true,
                "media": [
                    "contentId": .string(mediaEndpoint.url(forPath: "h264-aac-faststart.mp4")),
                    "contentType": "video/mp4", "streamType": "BUFFERED",
                ],
            ], to: transportID, namespace: .media)
        let reply = try await sender.reply(to: load)
        #expect(reply.mediaStates == ["BUFFERING"])
        let playing = try await sender.waitFor("PLAYING") { $0.mediaStates == ["PLAYING"] }
        let duration = try #require(playing.json["status"]?[0]?["media"]?["duration"]?.doubleValue)
        #expect(duration > 1.9 && duration < 2.2, "the mvhd of the 2 s sample")
        await sender.close()
        await emulator.stop()
        let entries = log.items
        #expect(entries.contains { $0.direction == .incoming && $0.payload?["type"] == "LOAD" })
        #expect(entries.contains { $0.direction == .outgoing && $0.payload?["type"] == "MEDIA_STATUS" })
        #expect(entries.contains { $0.note?.hasPrefix("connection from 127.0.0.1:") == true })
    }

    @Test("eureka_info and the icon are served over HTTP with the identity the TXT record carries")
    func eurekaInfo() async throws {
        let (emulator, endpoints) = try await startEmulator()
        let port = try #require(endpoints.httpPort)
        let transport = HTTPTransport()
        let answer = await transport.send(
            HTTPRequest(.get, "http://127.0.0.1:\(port)/setup/eureka_info?params=device_info,name", bodyLimit: 65_536))
        let response = try answer.get()
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        let json = try JSONParser().parse(response.body).value
        #expect(json["name"] == "Test TV")
        #expect(json["ssdp_udn"] == "5f1e2d3c-4b5a-4968-8776-655443322110")
        #expect(json["device_info"]?["model_name"] == "Chromecast")
        #expect(json["device_info"]?["capabilities"]?["display_supported"] == true)
        #expect(json["cast_port"]?.intValue == endpoints.castPort)
        #expect(json["mac_address"] == "66:54:43:32:21:10")
        let icon = try await transport.send(
            HTTPRequest(.get, "http://127.0.0.1:\(port)/setup/icon.png", bodyLimit: 1024)
        ).get()
        #expect(icon.status == 200)
        #expect(icon.body == DeviceIdentity.iconPNG)
        await emulator.stop()
    }

    @Test("fault: the socket is dropped after the scripted number of answered messages")
    func dropConnection() async throws {
        let (emulator, endpoints) = try await startEmulator(faults: ReceiverFaults(dropConnectionAfterMessages: 2))
        let sender = try await TestSender.connect(port: endpoints.castPort)
        try await sender.connect(to: "receiver-0")
        let first = try await sender.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        _ = try await sender.reply(to: first)
        _ = try await sender.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        let ending = try await sender.waitForEnd()
        #expect(ending?.code == ChannelError.Code.peerClosed)
        let other = try await TestSender.connect(port: endpoints.castPort)
        try await other.connect(to: "receiver-0")
        let answered = try await other.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        _ = try await other.reply(to: answered)
        await emulator.stop()
    }

    @Test("fault: with PONGs stopped the sender's heartbeat declares the link dead, while the socket stays open")
    func stopPongs() async throws {
        let (emulator, endpoints) = try await startEmulator()
        // Generous for a loaded machine: 3 missed PONGs 500 ms apart before the link is declared dead.
        let heartbeat = HeartbeatPolicy(
            interval: .milliseconds(500), maximumMissedPongs: 3, sourceID: "sender-0", destinationID: "receiver-0")
        let healthy = try await TestSender.connect(
            port: endpoints.castPort, options: ChannelOptions(heartbeat: heartbeat))
        try await healthy.connect(to: "receiver-0")
        try await Task.sleep(for: .seconds(2))
        #expect(!healthy.hasEnded, "PONGs keep the link alive")
        await emulator.setFaults(ReceiverFaults(stopAnsweringPings: true))
        let ending = try await healthy.waitForEnd(timeout: .seconds(15))
        #expect(ending?.code == ChannelError.Code.heartbeatTimeout)
        await emulator.stop()
    }

    @Test("fault: LAUNCH is refused with the scripted reason")
    func refuseLaunch() async throws {
        let (emulator, endpoints) = try await startEmulator(
            faults: ReceiverFaults(refusedLaunches: ["CC1AD845": "SYSTEM_ERROR"]))
        let sender = try await TestSender.connect(port: endpoints.castPort)
        try await sender.connect(to: "receiver-0")
        let launch = try await sender.send(
            ["type": "LAUNCH", "appId": "CC1AD845"], to: "receiver-0", namespace: .receiver)
        let reply = try await sender.reply(to: launch)
        #expect(reply.json["type"] == "LAUNCH_ERROR")
        #expect(reply.json["reason"] == "SYSTEM_ERROR")
        await emulator.stop()
    }

    @Test("fault: replies are held for the scripted delay while broadcasts go out at once")
    func delayedReplies() async throws {
        // A delay far longer than a loaded machine takes to send the broadcast.
        let (emulator, endpoints) = try await startEmulator(faults: ReceiverFaults(replyDelay: .seconds(5)))
        let sender = try await TestSender.connect(port: endpoints.castPort)
        try await sender.connect(to: "receiver-0")
        let clock = ContinuousClock()
        let start = clock.now
        let launch = try await sender.send(
            ["type": "LAUNCH", "appId": "CC1AD845"], to: "receiver-0", namespace: .receiver)
        _ = try await sender.waitFor("the broadcast") {
            $0.destinationID == "*" && $0.json["type"] == "RECEIVER_STATUS"
        }
        #expect(clock.now - start < .seconds(4))
        _ = try await sender.reply(to: launch)
        #expect(clock.now - start >= .seconds(5))
        await emulator.stop()
    }

    @Test("a failing item gets LOAD_FAILED with the scripted code, then IDLE/ERROR")
    func failItem() async throws {
        let faults = ReceiverFaults(failingItems: [
            .init(.contentID("http://127.0.0.1:9/broken.mp4"), code: .mediaDecode)
        ])
        let (emulator, endpoints) = try await startEmulator(faults: faults)
        let sender = try await TestSender.connect(port: endpoints.castPort)
        let transportID = try await launchDefaultMediaReceiver(sender)
        let load = try await sender.send(
            [
                "type": "LOAD",
                "media": [
                    "contentId": "http://127.0.0.1:9/broken.mp4", "contentType": "video/mp4", "streamType": "BUFFERED",
                ],
            ], to: transportID, namespace: .media)
        let failure = try await sender.reply(to: load)
        #expect(failure.json["type"] == "LOAD_FAILED")
        #expect(failure.json["detailedErrorCode"] == 102)
        await emulator.stop()
    }

    @Test("twenty senders at once: each CONNECTs, asks for the status and gets its own answer")
    func manySenders() async throws {
        let (emulator, endpoints) = try await startEmulator()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    let sender = try await TestSender.connect(port: endpoints.castPort, sourceID: "sender-\(index)")
                    try await sender.connect(to: "receiver-0")
                    let request = try await sender.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
                    let reply = try await sender.reply(to: request)
                    #expect(reply.destinationID == "sender-\(index)")
                    await sender.close()
                }
            }
            try await group.waitForAll()
        }
        await emulator.stop()
    }

    @Test("a CONNECT to an app that is not running is refused with CLOSE; binary messages are logged and ignored")
    func refusedConnectAndBinary() async throws {
        let log = LogCollector()
        let (emulator, endpoints) = try await startEmulator(log: log)
        let sender = try await TestSender.connect(port: endpoints.castPort)
        try await sender.connect(to: "no-such-transport")
        let close = try await sender.waitFor("CLOSE") { $0.namespace == .connection && $0.json["type"] == "CLOSE" }
        #expect(close.sourceID == "no-such-transport")
        try await sender.link.send(
            ChannelMessage(
                sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth,
                payload: .binary([0x0A, 0x00])))
        try await sender.connect(to: "receiver-0")
        let status = try await sender.send(["type": "GET_STATUS"], to: "receiver-0", namespace: .receiver)
        _ = try await sender.reply(to: status)
        await emulator.stop()
        #expect(log.items.contains { $0.note?.contains("device authentication") == true })
    }
}
