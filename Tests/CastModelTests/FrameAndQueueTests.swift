import Testing

@testable import CastModel
@testable import JSONSupport

@Suite("CastFrame size arithmetic")
struct CastFrameTests {
    // On the media namespace with the default ids the envelope is 87 bytes plus the payload's
    // length varint: 2 (version) + 1+1+8 (source "sender-0") + 1+1+36 (GUID destination)
    // + 1+1+32 (namespace) + 2 (payload type) + 1 (payload tag).
    @Test(
        "body size around the varint boundaries",
        arguments: [
            (0, 88), (1, 89), (127, 215), (128, 217), (16_383, 16_472), (16_384, 16_474), (65_446, 65_536),
            (65_447, 65_537),
        ])
    func mediaBodySize(payload: Int, body: Int) {
        #expect(CastFrame.bodySize(payloadSize: payload, namespace: .media) == body)
    }

    @Test(
        "varint sizes",
        arguments: [
            (0, 1), (1, 1), (127, 1), (128, 2), (16_383, 2), (16_384, 3), (2_097_151, 3), (2_097_152, 4),
        ])
    func varint(value: Int, size: Int) {
        #expect(CastFrame.varintSize(value) == size)
    }

    @Test("the receiver namespace is three bytes longer")
    func receiverNamespace() {
        #expect(CastFrame.bodySize(payloadSize: 100, namespace: .receiver) == 191)
        #expect(CastFrame.maximumPayloadSize(namespace: .receiver) == 65_443)
    }

    @Test("source and destination ids count, including their own length varints")
    func customIDs() {
        #expect(
            CastFrame.bodySize(
                payloadSize: 100, namespace: .media, sourceID: "sender-12345", destinationID: "receiver-0") == 166)
        let longID = String(repeating: "d", count: 200)
        // 1 tag + 2 length + 200 bytes instead of 1 + 1 + 36.
        #expect(CastFrame.bodySize(payloadSize: 100, namespace: .media, destinationID: longID) == 353)
    }

    @Test(
        "maximumPayloadSize is the largest payload whose body fits",
        arguments: [
            CastNamespace.media, .receiver, .connection, .heartbeat, "urn:x-cast:com.example.custom",
        ])
    func maximumPayload(namespace: CastNamespace) {
        let maximum = CastFrame.maximumPayloadSize(namespace: namespace)
        #expect(CastFrame.bodySize(payloadSize: maximum, namespace: namespace) <= CastFrame.maximumBodySize)
        #expect(CastFrame.bodySize(payloadSize: maximum + 1, namespace: namespace) > CastFrame.maximumBodySize)
    }

    @Test("the documented constants")
    func constants() {
        #expect(CastFrame.maximumBodySize == 65_536)
        #expect(CastFrame.maximumPayloadSize(namespace: .media) == 65_446)
        #expect(CastNamespace.media.rawValue == "urn:x-cast:com.google.cast.media")
    }
}

@Suite("QueuePlanner")
struct QueuePlannerTests {
    static let items = (0..<2_000).map(Fixture.queueItem)

    /// The wire size of a message once the sender has filled in the largest ids it uses.
    func bodySize(of message: some CastRequest) -> Int {
        var message = message
        message.requestID = Int(Int32.max)
        var json = message.jsonValue
        if case .object(var members) = json, members["type"] == "QUEUE_INSERT" {
            members["mediaSessionId"] = JSONValue(Int(Int32.max))
            json = .object(members)
        }
        return CastFrame.bodySize(payloadSize: JSONWriter.compact.bytes(from: json).count, namespace: .media)
    }

    @Test("2,000 items: every message fits in a frame and the items come back in order")
    func twoThousandItems() throws {
        let plan = try QueuePlanner().plan(items: Self.items, repeatMode: .all)
        #expect(plan.inserts.count >= 5)
        #expect(bodySize(of: plan.queueLoad) <= CastFrame.maximumBodySize)
        for insert in plan.inserts {
            #expect(bodySize(of: insert) <= CastFrame.maximumBodySize)
            #expect(!insert.items.isEmpty)
            #expect(insert.insertBefore == nil)
        }
        let concatenated = plan.queueLoad.items + plan.inserts.flatMap(\.items)
        #expect(concatenated == Self.items)
        #expect(plan.queueLoad.startIndex == 0)
        #expect(plan.queueLoad.repeatMode == .all)
        #expect(plan.deferredStartIndex == nil)
        // The planned messages are themselves valid.
        #expect(CastValidator().validate(plan.queueLoad).isEmpty)
        #expect(plan.inserts.allSatisfy { CastValidator().validate($0).isEmpty })
    }

    @Test("the batches are reasonably full: no more messages than twice the minimum")
    func packing() throws {
        let plan = try QueuePlanner().plan(items: Self.items)
        let totalItemBytes = Self.items.reduce(0) { $0 + $1.jsonText.utf8.count + 1 }
        let minimumMessages = totalItemBytes / CastFrame.maximumPayloadSize(namespace: .media) + 1
        #expect(plan.inserts.count + 1 <= 2 * minimumMessages)
    }

    @Test("a small budget splits into many messages, each within it")
    func smallBudget() throws {
        let budget = 4_000
        let items = Array(Self.items.prefix(100))
        let plan = try QueuePlanner(maximumPayloadSize: budget).plan(items: items, startIndex: 2)
        #expect(plan.inserts.count > 10)
        var load = plan.queueLoad
        load.requestID = Int(Int32.max)
        #expect(load.jsonText.utf8.count <= budget)
        for var insert in plan.inserts {
            insert.requestID = Int(Int32.max)
            insert.mediaSessionID = Int(Int32.max)
            #expect(insert.jsonText.utf8.count <= budget)
        }
        #expect(plan.queueLoad.items + plan.inserts.flatMap(\.items) == items)
        #expect(plan.queueLoad.startIndex == 2)
        #expect(plan.deferredStartIndex == nil)
    }

    @Test("a start item beyond the first message is deferred")
    func deferredStart() throws {
        let plan = try QueuePlanner().plan(items: Self.items, startIndex: 1_500)
        #expect(plan.queueLoad.items.count < 1_500)
        #expect(plan.queueLoad.startIndex == 0)
        #expect(plan.deferredStartIndex == 1_500)
    }

    @Test("the last item of the first message is not deferred; the next one is")
    func deferredBoundary() throws {
        let first = try QueuePlanner().plan(items: Self.items).queueLoad.items.count
        let last = try QueuePlanner().plan(items: Self.items, startIndex: first - 1)
        #expect(last.deferredStartIndex == nil)
        #expect(last.queueLoad.startIndex == first - 1)
        let next = try QueuePlanner().plan(items: Self.items, startIndex: first)
        #expect(next.deferredStartIndex == first)
        #expect(next.queueLoad.startIndex == 0)
    }

    @Test("a queue that fits is one QUEUE_LOAD")
    func singleMessage() throws {
        let items = Array(Self.items.prefix(10))
        let plan = try QueuePlanner().plan(items: items, startIndex: 3)
        #expect(plan.inserts.isEmpty)
        #expect(plan.queueLoad.items == items)
        #expect(plan.queueLoad.startIndex == 3)
    }

    @Test("a single item larger than a frame throws .itemTooLarge with its index")
    func oversizedItem() throws {
        var items = Array(Self.items.prefix(5))
        items[3].customData = ["lyrics": .string(String(repeating: "la ", count: 30_000))]
        let error = try #require(throws: QueuePlanner.PlanError.self) {
            _ = try QueuePlanner().plan(items: items)
        }
        guard case .itemTooLarge(let index, let bytes) = error else {
            Issue.record("expected .itemTooLarge, got \(error)")
            return
        }
        #expect(index == 3)
        #expect(bytes > 90_000)
        #expect(error.description.hasPrefix("queue item 3 alone is"))
    }

    @Test("an item that fits beside the QUEUE_LOAD envelope but not the QUEUE_INSERT one is never sent oversized")
    func envelopeBoundary() throws {
        let small = Self.items[0]
        var big = Self.items[1]
        big.customData = ["notes": .string(String(repeating: "n", count: 3_000))]
        // Measured sizes of the two empty envelopes with the largest ids a sender uses.
        let loadEnvelope = QueueLoadRequest(requestID: Int(Int32.max), items: [], startIndex: 0).jsonText.utf8.count
        let insertEnvelope = QueueInsertRequest(requestID: Int(Int32.max), mediaSessionID: Int(Int32.max), items: [])
            .jsonText.utf8.count
        #expect(insertEnvelope > loadEnvelope)
        let bigSize = big.jsonText.utf8.count + 1
        var oversized: [Int] = []
        for budget in (bigSize + loadEnvelope)..<(bigSize + insertEnvelope) {
            do {
                let plan = try QueuePlanner(maximumPayloadSize: budget).plan(items: [small, big])
                for var insert in plan.inserts {
                    insert.requestID = Int(Int32.max)
                    insert.mediaSessionID = Int(Int32.max)
                    if insert.jsonText.utf8.count > budget { oversized.append(budget) }
                }
            } catch {
                // Refusing the item is an acceptable answer; sending it oversized is not.
                #expect(error == .itemTooLarge(index: 1, bytes: bigSize))
            }
        }
        #expect(oversized.isEmpty, "budgets whose QUEUE_INSERT exceeds them: \(oversized)")
    }

    @Test("an empty queue throws .empty")
    func emptyQueue() {
        #expect(throws: QueuePlanner.PlanError.empty) {
            _ = try QueuePlanner().plan(items: [])
        }
    }
}

@Suite("MediaStatus merging")
struct MediaStatusMergeTests {
    func status(_ text: String) throws -> MediaStatus {
        let (message, _, _) = try decode(MediaStatusMessage.self, text)
        return try #require(message.status.first)
    }

    @Test("an update without media keeps the media already known")
    func keepsMedia() throws {
        let current = try status(WireSamples.mediaStatusPlaying)
        let update = try status(
            #"{"type":"MEDIA_STATUS","requestId":0,"status":[{"mediaSessionId":1,"playbackRate":1,"playerState":"PAUSED","currentTime":61.2,"supportedMediaCommands":274447,"volume":{"level":1,"muted":false},"activeTrackIds":[]}]}"#
        )
        #expect(update.media == nil)
        let merged = current.merging(update)
        #expect(merged.media == current.media)
        #expect(merged.media?.duration == 596.474195)
        #expect(merged.playerState == .paused)
        #expect(merged.currentTime == 61.2)
        #expect(merged.items == current.items)
        #expect(merged.queueData == current.queueData)
        #expect(merged.customData == ["playerVersion": "3.0.0126"])
    }

    @Test("an update with media replaces it; idleReason and extendedStatus describe only the update")
    func replaces() throws {
        let loading = try status(WireSamples.mediaStatusLoading)
        #expect(loading.extendedStatus != nil)
        let playing = try status(WireSamples.mediaStatusPlaying)
        let merged = loading.merging(playing)
        #expect(merged.media?.contentID == "http://192.168.1.20:8123/local/bbb.mp4")
        #expect(merged.extendedStatus == nil)
        #expect(merged.mediaSessionID == 1)

        let finished = merged.merging(try status(WireSamples.mediaStatusFinished))
        #expect(finished.idleReason == .finished)
        #expect(finished.playerState == .idle)
        #expect(finished.media == merged.media)
        let resumed = finished.merging(MediaStatus(mediaSessionID: 1, playerState: .playing))
        #expect(resumed.idleReason == nil)
    }

    @Test("extra members merge, the update winning")
    func extras() {
        let current = MediaStatus(mediaSessionID: 1, playerState: .playing, extraMembers: ["a": 1, "b": 2])
        let update = MediaStatus(playerState: .buffering, extraMembers: ["b": 3, "c": 4])
        let merged = current.merging(update)
        #expect(merged.extraMembers == ["a": 1, "b": 3, "c": 4])
        #expect(merged.mediaSessionID == 1)
        #expect(merged.playerState == .buffering)
    }
}
