import CastModel
import CastReceiver
import JSONSupport
import Testing

@Suite("Platform: receiver-0")
struct PlatformTests {
    @Test(
        "GET_STATUS is answered with the requestId, and only to the requester",
        arguments: [
            "1", "7", "2147483647",
            "3.0",  // some senders write every number as a float
        ])
    func getStatusEchoesRequestID(requestID: String) async throws {
        var harness = Harness()
        await harness.connect("phone")
        await harness.connect("tablet")
        let outputs = await harness.send(#"{"type":"GET_STATUS","requestId":\#(requestID)}"#)
        let reply = try #require(outputs.messages.first)
        #expect(outputs.messages.count == 1)
        #expect(reply.sender == "phone")
        #expect(reply.sourceID == "receiver-0")
        #expect(reply.destinationID == "sender-0")
        #expect(reply.type == "RECEIVER_STATUS")
        #expect(reply.requestID == Int(Double(requestID) ?? 0))
        #expect(reply.payload["status"]?["applications"] == nil, "an idle device lists no applications")
        #expect(reply.payload["status"]?["volume"]?["level"]?.doubleValue == 1)
    }

    @Test("LAUNCH replies to the requester and broadcasts requestId 0 to every socket on receiver-0")
    func launchRepliesAndBroadcasts() async throws {
        var harness = Harness()
        await harness.connect("phone")
        await harness.connect("tablet")
        await harness.connect("tablet", source: "client-1234")  // a second endpoint on the same socket
        let outputs = await harness.send(#"{"type":"LAUNCH","requestId":5,"appId":"CC1AD845"}"#)
        let reply = try #require(outputs.replies.first)
        #expect(outputs.replies.count == 1)
        #expect(reply.sender == "phone" && reply.requestID == 5 && reply.type == "RECEIVER_STATUS")
        // One broadcast per socket, addressed to *, however many endpoints the socket has.
        #expect(outputs.broadcasts.map(\.sender) == ["phone", "tablet"])
        #expect(
            outputs.broadcasts.allSatisfy {
                $0.requestID == 0 && $0.destinationID == "*" && $0.type == "RECEIVER_STATUS"
            })
        let app = try #require(reply.payload["status"]?["applications"]?[0])
        let sessionID = try #require(app["sessionId"]?.stringValue)
        #expect(app["transportId"]?.stringValue == sessionID, "current devices use the session GUID as transport id")
        #expect(sessionID.count == 36 && sessionID.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12])
        #expect(app["namespaces"] == [["name": "urn:x-cast:com.google.cast.media"]])
        #expect(app["appType"] == "WEB")
        #expect(app["displayName"] == "Default Media Receiver")
    }

    @Test("a session id is fresh for every LAUNCH of a stopped app")
    func freshSessionIDs() async throws {
        var harness = Harness()
        await harness.connect()
        await harness.send(#"{"type":"LAUNCH","requestId":1,"appId":"CC1AD845"}"#)
        let first = harness.transportID
        await harness.send(#"{"type":"STOP","requestId":2}"#)
        await harness.send(#"{"type":"LAUNCH","requestId":3,"appId":"CC1AD845"}"#)
        #expect(harness.transportID != first)
    }

    @Test("LAUNCH of the running app joins its session")
    func relaunchJoins() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let before = harness.transportID
        let outputs = await harness.send(#"{"type":"LAUNCH","requestId":9,"appId":"CC1AD845"}"#)
        #expect(harness.transportID == before)
        #expect(outputs.replies.first?.requestID == 9)
        #expect(outputs.broadcasts.isEmpty, "nothing changed, so nothing is broadcast")
    }

    @Test(
        "LAUNCH failures answer LAUNCH_ERROR with the device's reason",
        arguments: [
            (#"{"type":"LAUNCH","requestId":4,"appId":"DEADBEEF"}"#, "NOT_FOUND"),
            (#"{"type":"LAUNCH","requestId":4}"#, "BAD_PARAMETER"),
            (#"{"type":"LAUNCH","requestId":4,"appId":"CC1AD845","supportedAppTypes":["XBOX"]}"#, "BAD_PARAMETER"),
            (#"{"type":"LAUNCH","requestId":4,"appId":"CC1AD845","supportedAppTypes":[]}"#, "BAD_PARAMETER"),
            // Only an Android TV version was asked for, and this device has none.
            (#"{"type":"LAUNCH","requestId":4,"appId":"CC1AD845","supportedAppTypes":["ANDROID_TV"]}"#, "NOT_FOUND"),
        ])
    func launchErrors(payload: String, reason: String) async throws {
        var harness = Harness()
        await harness.connect()
        await harness.connect("tablet")
        let outputs = await harness.send(payload)
        #expect(outputs.messages.count == 1, "a failed LAUNCH changes nothing, so nothing is broadcast")
        let reply = try #require(outputs.messages.first)
        #expect(reply.payload == ["type": "LAUNCH_ERROR", "requestId": 4, "reason": .string(reason)])
        #expect(harness.device.runningApp == nil)
    }

    @Test("Cast Connect: supportedAppTypes and credentialsData are recorded, ANDROID_TV picked when installed")
    func castConnectLaunch() async throws {
        var configuration = Harness.testConfiguration
        configuration.installedApps = [
            InstalledApp(appID: "CC1AD845", displayName: "Default Media Receiver", hasAndroidTVVersion: true)
        ]
        var harness = Harness(configuration: configuration)
        await harness.connect()
        let outputs = await harness.send(
            #"{"type":"LAUNCH","requestId":3,"appId":"CC1AD845","language":"en-US","supportedAppTypes":["WEB","ANDROID_TV"],"credentialsData":{"credentials":"token-1","credentialsType":"android"}}"#
        )
        #expect(outputs.replies.first?.payload["status"]?["applications"]?[0]?["appType"] == "ANDROID_TV")
        let app = try #require(harness.device.runningApp)
        #expect(app.supportedAppTypes == [.web, .androidTV])
        #expect(app.credentialsData == CredentialsData(credentials: "token-1", credentialsType: .android))
        #expect(app.language == "en-US")
        #expect(harness.log.contains { $0.note?.contains("credentialsData of type android recorded") == true })
    }

    @Test("STOP ends the app, closes its connections and broadcasts the new status")
    func stopApp() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver(senders: ["phone", "tablet"])
        let sessionID = harness.transportID
        let outputs = await harness.send(#"{"type":"STOP","requestId":8,"sessionId":"\#(sessionID)"}"#)
        #expect(outputs.contains(.closeVirtualConnection(sender: "phone", localID: sessionID, remoteID: "sender-0")))
        #expect(outputs.contains(.closeVirtualConnection(sender: "tablet", localID: sessionID, remoteID: "sender-0")))
        #expect(outputs.replies.first?.requestID == 8)
        #expect(outputs.replies.first?.payload["status"]?["applications"] == nil)
        #expect(outputs.broadcasts.filter { $0.type == "RECEIVER_STATUS" }.map(\.sender) == ["phone", "tablet"])
        #expect(harness.device.runningApp == nil)
        #expect(!harness.device.connections.contains { $0.localID == sessionID })
    }

    @Test("STOP with another sessionId is refused; without one it stops whatever runs")
    func stopSessionIDs() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let wrong = await harness.send(#"{"type":"STOP","requestId":2,"sessionId":"not-the-session"}"#)
        #expect(
            wrong.messages.first?.payload == [
                "type": "INVALID_REQUEST", "requestId": 2, "reason": "INVALID_SESSION_ID",
            ])
        #expect(harness.device.runningApp != nil)
        await harness.send(#"{"type":"STOP","requestId":3}"#)  // go-chromecast sends no sessionId
        #expect(harness.device.runningApp == nil)
    }

    @Test(
        "SET_VOLUME takes level, muted or both; level is clamped to 0…1",
        arguments: [
            (#"{"level":0.25}"#, 0.25, false),
            (#"{"muted":true}"#, 1.0, true),  // go-chromecast omits level when it is 0
            (#"{"level":0,"muted":true}"#, 0.0, true),
            (#"{"level":1.7}"#, 1.0, false),
            (#"{"level":-2}"#, 0.0, false),
            (#"{"level":1,"stepInterval":0.1,"extra":{}}"#, 1.0, false),  // extra members are ignored
        ])
    func setVolume(volume: String, level: Double, muted: Bool) async throws {
        var harness = Harness()
        await harness.connect()
        let outputs = await harness.send(#"{"type":"SET_VOLUME","requestId":6,"volume":\#(volume)}"#)
        let reply = try #require(outputs.replies.first)
        #expect(reply.requestID == 6 && reply.type == "RECEIVER_STATUS")
        #expect(reply.payload["status"]?["volume"]?["level"]?.doubleValue == level)
        #expect(reply.payload["status"]?["volume"]?["muted"]?.boolValue == muted)
        #expect(outputs.broadcasts.count == 1)
        #expect(harness.device.volume.level == level)
    }

    @Test(
        "SET_VOLUME without level or muted is INVALID_PARAMS",
        arguments: [
            #"{"type":"SET_VOLUME","requestId":6}"#, #"{"type":"SET_VOLUME","requestId":6,"volume":{}}"#,
            #"{"type":"SET_VOLUME","requestId":6,"volume":0.5}"#,
        ])
    func setVolumeInvalid(payload: String) async throws {
        var harness = Harness()
        await harness.connect()
        let outputs = await harness.send(payload)
        #expect(
            outputs.messages.map(\.payload) == [
                ["type": "INVALID_REQUEST", "requestId": 6, "reason": "INVALID_PARAMS"]
            ])
    }

    @Test("GET_APP_AVAILABILITY answers with responseType and no type")
    func appAvailability() async throws {
        var harness = Harness()
        await harness.connect()
        let outputs = await harness.send(
            #"{"type":"GET_APP_AVAILABILITY","requestId":11,"appId":["CC1AD845","233637DE"]}"#)
        #expect(
            outputs.messages.map(\.payload) == [
                [
                    "requestId": 11, "responseType": "GET_APP_AVAILABILITY",
                    "availability": ["CC1AD845": "APP_AVAILABLE", "233637DE": "APP_UNAVAILABLE"],
                ]
            ])
        let single = await harness.send(#"{"type":"GET_APP_AVAILABILITY","requestId":12,"appId":"CC1AD845"}"#)
        #expect(
            single.messages.map(\.payload) == [
                [
                    "requestId": 12, "responseType": "GET_APP_AVAILABILITY",
                    "availability": ["CC1AD845": "APP_AVAILABLE"],
                ]
            ])
    }

    @Test("an unknown type is INVALID_COMMAND when it has a requestId, and ignored otherwise")
    func unknownTypes() async throws {
        var harness = Harness()
        await harness.connect()
        let answered = await harness.send(#"{"type":"GET_CASTING_GROUPS","requestId":12}"#)
        #expect(
            answered.messages.map(\.payload) == [
                ["type": "INVALID_REQUEST", "requestId": 12, "reason": "INVALID_COMMAND"]
            ])
        let ignored = await harness.send(#"{"type":"MYSTERY"}"#)
        #expect(ignored.isEmpty)
        #expect(harness.log.last?.note?.contains("no requestId") == true)
    }

    @Test(
        "messages without a virtual connection, or not JSON objects, are dropped",
        arguments: [
            ("stranger", #"{"type":"GET_STATUS","requestId":1}"#),
            ("phone", #"[1,2,3]"#),
            ("phone", #"{"type":"GET_STATUS","requestId":"#),
        ])
    func droppedMessages(sender: String, payload: String) async throws {
        var harness = Harness()
        await harness.connect("phone")
        let outputs = await harness.send(payload, from: SenderID(sender))
        #expect(outputs.isEmpty)
        #expect(harness.log.last?.direction == .event)
    }

    @Test("a CONNECT to a transport id that is not running is refused with CLOSE")
    func connectRefused() async throws {
        var harness = Harness()
        let outputs = await harness.connect("phone", to: "web-5")
        #expect(outputs == [.closeVirtualConnection(sender: "phone", localID: "web-5", remoteID: "sender-0")])
        #expect(harness.device.connections.isEmpty)
    }

    @Test("after CLOSE or a lost socket a sender no longer gets broadcasts")
    func closeStopsBroadcasts() async throws {
        var harness = Harness()
        await harness.connect("phone")
        await harness.connect("tablet")
        await harness.connect("watch")
        _ = harness.device.close(sender: "tablet", source: "sender-0", destination: "receiver-0")
        _ = harness.device.senderDisconnected("watch")
        let outputs = await harness.send(#"{"type":"SET_VOLUME","requestId":2,"volume":{"muted":true}}"#)
        #expect(Set(outputs.messages.map(\.sender)) == ["phone"])
    }

    @Test("CONNECT and PING passed on by the transport are handled too")
    func connectionNamespaceThroughReceive() async throws {
        var harness = Harness()
        await harness.send(
            #"{"type":"CONNECT","origin":{},"userAgent":"PyChromecast","senderInfo":{"sdkType":2}}"#,
            namespace: .connection)
        #expect(harness.device.connections.count == 1)
        let pong = await harness.send(#"{"type":"PING","requestId":25}"#, namespace: .heartbeat)
        #expect(pong.messages.map(\.payload) == [["type": "PONG"]])
        #expect(pong.messages.first?.destinationID == "sender-0")
        await harness.send(#"{"type":"CLOSE","origin":{}}"#, namespace: .connection)
        #expect(harness.device.connections.isEmpty)
    }

    @Test(
        "platform requests tolerate extra members",
        arguments: [
            #"{"type":"GET_STATUS","requestId":3,"sessionId":"x","customData":null,"origin":{}}"#,
            #"{"type":"LAUNCH","requestId":3,"appId":"CC1AD845","appParams":{"a":1},"relaunchIfRunning":false}"#,
        ])
    func extraMembersTolerated(payload: String) async throws {
        var harness = Harness()
        await harness.connect()
        let outputs = await harness.send(payload)
        #expect(outputs.replies.first?.type == "RECEIVER_STATUS")
        #expect(outputs.replies.first?.requestID == 3)
    }

    @Test("STOP during playback ends the media with IDLE / CANCELLED before the app's connections close")
    func stopDuringPlayback() async throws {
        var harness = Harness()
        await harness.launchAndLoad()
        await harness.advance(by: 1)
        let sessionID = harness.transportID
        let outputs = await harness.send(#"{"type":"STOP","requestId":9,"sessionId":"\#(sessionID)"}"#)
        let order = outputs.map { output -> String in
            switch output {
            case .message(let message): message.type ?? "?"
            case .closeVirtualConnection: "CLOSE"
            default: "other"
            }
        }
        #expect(order == ["MEDIA_STATUS", "CLOSE", "RECEIVER_STATUS", "RECEIVER_STATUS"])
        #expect(outputs.broadcastStates == ["IDLE/CANCELLED"])
    }

    @Test("LAUNCH of another app replaces the running one")
    func launchReplaces() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let media = harness.transportID
        let outputs = await harness.send(#"{"type":"LAUNCH","requestId":4,"appId":"E8C28D3C"}"#)
        #expect(outputs.contains(.closeVirtualConnection(sender: "phone", localID: media, remoteID: "sender-0")))
        let app = try #require(outputs.replies.first?.payload["status"]?["applications"]?[0])
        #expect(app["appId"] == "E8C28D3C")
        #expect(app["isIdleScreen"] == true)
        #expect(app["namespaces"] == [])
        #expect(harness.transportID != media)
    }
}
