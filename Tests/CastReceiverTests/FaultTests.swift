import CastModel
import CastReceiver
import JSONSupport
import Testing

@Suite("Scriptable faults")
struct FaultTests {
    @Test("dropConnectionAfter: the socket is dropped right after the n-th message is answered")
    func dropConnection() async throws {
        var harness = Harness(faults: ReceiverFaults(dropConnectionAfterMessages: 2))
        await harness.connect("phone")
        await harness.connect("tablet")
        let first = await harness.send(#"{"type":"GET_STATUS","requestId":1}"#)
        #expect(!first.contains(.dropConnection("phone")))
        let second = await harness.send(#"{"type":"GET_STATUS","requestId":2}"#)
        #expect(second.first?.message?.requestID == 2, "the answer goes out first")
        #expect(second.last == .dropConnection("phone"))
        #expect(!harness.device.connections.contains { $0.sender == "phone" })
        #expect(harness.device.connections.contains { $0.sender == "tablet" })
    }

    @Test("dropConnectionSender limits the fault to one socket")
    func dropOneSender() async throws {
        var harness = Harness(faults: ReceiverFaults(dropConnectionAfterMessages: 1, dropConnectionSender: "tablet"))
        await harness.connect("phone")
        await harness.connect("tablet")
        let phone = await harness.send(#"{"type":"GET_STATUS","requestId":1}"#, from: "phone")
        #expect(!phone.contains(.dropConnection("phone")))
        let tablet = await harness.send(#"{"type":"GET_STATUS","requestId":1}"#, from: "tablet")
        #expect(tablet.contains(.dropConnection("tablet")))
    }

    @Test("stopPongs: the transport is told at connect (or when the fault is set), and PINGs go unanswered")
    func stopPongs() async throws {
        var harness = Harness(faults: ReceiverFaults(stopAnsweringPings: true))
        let connected = await harness.connect("phone")
        #expect(connected == [.stopAnsweringPings("phone")])
        let ping = await harness.send(#"{"type":"PING"}"#, namespace: .heartbeat)
        #expect(ping.isEmpty)

        var later = Harness()
        await later.connect("phone")
        await later.connect("tablet")
        let set = later.device.setFaults(ReceiverFaults(stopAnsweringPings: true))
        #expect(set == [.stopAnsweringPings("phone"), .stopAnsweringPings("tablet")])
    }

    @Test("refuseLaunch answers LAUNCH_ERROR with the scripted reason", arguments: ["CANCELLED", "SYSTEM_ERROR"])
    func refuseLaunch(reason: String) async throws {
        var harness = Harness(faults: ReceiverFaults(refusedLaunches: ["CC1AD845": reason]))
        await harness.connect()
        let outputs = await harness.send(#"{"type":"LAUNCH","requestId":3,"appId":"CC1AD845"}"#)
        #expect(
            outputs.messages.map(\.payload) == [["type": "LAUNCH_ERROR", "requestId": 3, "reason": .string(reason)]])
        #expect(harness.device.runningApp == nil)
    }

    @Test(
        "failItem by content id or queue index fails that item with the scripted code, without fetching",
        arguments: [
            (ReceiverFaults.ItemFailure(.contentID("http://media.example/item-1.mp4"), code: .mediaDecode), 1, 102),
            (ReceiverFaults.ItemFailure(.index(1), code: .hlsNetworkPlaylist), 2, 312),
        ])
    func failItem(rule: ReceiverFaults.ItemFailure, failingItem: Int, code: Int) async throws {
        var harness = Harness(faults: ReceiverFaults(failingItems: [rule]))
        await harness.launchDefaultMediaReceiver()
        var outputs = await harness.media(queueLoad(count: 2))
        if failingItem == 2 {
            await harness.advance(by: 0.5)
            outputs = await harness.advance(by: 10)
        }
        let failure = try #require(outputs.messages(type: "LOAD_FAILED").first)
        #expect(failure.payload["detailedErrorCode"] == .number(JSONNumber(code)))
        #expect(failure.payload["itemId"] == .number(JSONNumber(failingItem)))
        #expect(!harness.fetcher.requests.contains("http://media.example/item-\(failingItem).mp4"))
    }

    @Test("delayReplies holds replies until the delay has passed; broadcasts are not held")
    func delayReplies() async throws {
        var harness = Harness(faults: ReceiverFaults(replyDelay: .seconds(3)))
        await harness.connect("phone")
        await harness.connect("tablet")
        let immediate = await harness.send(#"{"type":"SET_VOLUME","requestId":4,"volume":{"level":0.5}}"#)
        #expect(immediate.replies.isEmpty)
        #expect(immediate.broadcasts.count == 2)
        #expect(harness.device.nextDeadline == .seconds(3))
        let early = await harness.advance(by: 2.9)
        #expect(early.isEmpty)
        let due = await harness.advance(by: 0.1)
        #expect(due.replies.map(\.requestID) == [4])
        #expect(due.replies.first?.sender == "phone")
    }

    @Test("a held reply whose sender left is not sent")
    func delayedReplyToGoneSender() async throws {
        var harness = Harness(faults: ReceiverFaults(replyDelay: .seconds(1)))
        await harness.connect("phone")
        await harness.send(#"{"type":"GET_STATUS","requestId":4}"#)
        _ = harness.device.senderDisconnected("phone")
        let due = await harness.advance(by: 2)
        #expect(due.isEmpty)
    }

    @Test("faults are read from JSON")
    func faultsFromJSON() throws {
        let faults = try ReceiverFaults(
            jsonText: #"""
                {"dropConnectionAfter": 3, "dropConnectionSender": "tablet", "stopPongs": true,
                 "refuseLaunch": {"CC1AD845": "CANCELLED"},
                 "failItems": [{"index": 1, "detailedErrorCode": 312}, {"contentId": "http://h/a.mp4", "detailedErrorCode": "MEDIA_DECODE"}, {"index": 0}],
                 "delayReplies": 2.5}
                """#)
        #expect(
            faults
                == ReceiverFaults(
                    dropConnectionAfterMessages: 3, dropConnectionSender: "tablet", stopAnsweringPings: true,
                    refusedLaunches: ["CC1AD845": "CANCELLED"],
                    failingItems: [
                        .init(.index(1), code: .hlsNetworkPlaylist),
                        .init(.contentID("http://h/a.mp4"), code: .mediaDecode),
                        .init(.index(0), code: .mediaSourceNotSupported),
                    ],
                    replyDelay: .milliseconds(2500)))
        #expect(
            try ReceiverFaults(jsonText: #"{"refuseLaunch": ["CC1AD845", "233637DE"]}"#).refusedLaunches
                == ["CC1AD845": "CANCELLED", "233637DE": "CANCELLED"])
        #expect(try ReceiverFaults(jsonText: "{}").isEmpty)
    }

    @Test(
        "bad faults documents are refused with a stable code",
        arguments: [
            ("[1]", "faults.not-object"),
            ("{", "faults.syntax"),
            (#"{"stopPong": true}"#, "faults.unknown-member"),
            (#"{"dropConnectionAfter": 0}"#, "faults.type-mismatch"),
            (#"{"delayReplies": "2s"}"#, "faults.type-mismatch"),
            (#"{"failItems": [{"index": 1, "detailedErrorCode": "NO_SUCH_CODE"}]}"#, "faults.type-mismatch"),
            (#"{"failItems": [{"detailedErrorCode": 104}]}"#, "faults.type-mismatch"),
        ])
    func badFaults(text: String, code: String) throws {
        let error = #expect(throws: ReceiverFaultsError.self) { try ReceiverFaults(jsonText: text) }
        #expect(error?.code.rawValue == code)
        #expect(error?.fix?.isEmpty == false)
    }
}

@Suite("Detailed error codes")
struct DetailedErrorCodeTests {
    @Test(
        "codes have the receiver's names and parse from either form",
        arguments: [
            (104, "MEDIA_SRC_NOT_SUPPORTED"), (301, "SEGMENT_NETWORK"), (311, "HLS_NETWORK_MASTER_PLAYLIST"),
            (312, "HLS_NETWORK_PLAYLIST"), (321, "DASH_NETWORK"), (411, "HLS_MANIFEST_MASTER"),
            (421, "DASH_MANIFEST_NO_PERIODS"),
            (905, "LOAD_FAILED"), (999, "GENERIC"),
        ])
    func names(code: Int, name: String) {
        #expect(DetailedErrorCode(code).name == name)
        #expect(DetailedErrorCode(parsing: name) == DetailedErrorCode(code))
        #expect(DetailedErrorCode(parsing: String(code)) == DetailedErrorCode(code))
    }

    @Test("an unknown code keeps its number")
    func unknownCode() {
        #expect(DetailedErrorCode(1234).description == "1234 UNKNOWN_1234")
        #expect(DetailedErrorCode(parsing: "NOT_A_CODE") == nil)
    }
}
