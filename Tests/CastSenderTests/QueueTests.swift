import CastModel
import CastSender
import JSONSupport
import Synchronization
import Testing

@Suite("Queues")
struct QueueTests {
    static let items = (0..<600).map(Fixture.queueItem)
    static var contentIDs: [String] { items.compactMap { $0.media?.contentID } }

    @Test(
        "a 600-item queue: QUEUE_LOAD then QUEUE_INSERTs, every message ≤ 64 KiB, all items in order",
        arguments: [
            nil,  // a GUID, as current devices give
            "web-5",  // old firmware
            String(repeating: "t", count: 300),  // longer than any device uses: the budget shrinks
        ] as [String?])
    func sixHundredItems(transportID: String?) async throws {
        let device = ScriptedDevice()
        await device.setFixedTransportID(transportID)
        let (_, sender) = makeSender(device: device)
        try await sender.connect()
        try await sender.launch()
        let result = try await sender.queueLoad(items: Self.items, repeatMode: .all)
        let loads = await device.received(type: "QUEUE_LOAD")
        let inserts = await device.received(type: "QUEUE_INSERT")
        #expect(loads.count == 1)
        #expect(inserts.count >= 4)
        #expect(await device.largestBodySize <= CastFrame.maximumBodySize)
        for message in loads + inserts {
            let body = CastFrame.bodySize(
                payloadSize: message.message.payload.utf8.count, namespace: message.message.namespace,
                sourceID: message.message.sourceID, destinationID: message.message.destinationID)
            #expect(body <= CastFrame.maximumBodySize)
            // Close to full: the split does not waste messages.
            if message.message.payload != inserts.last?.message.payload {
                #expect(body > CastFrame.maximumBodySize - 1_200)
            }
        }
        // Every insert carries the media session the QUEUE_LOAD created, and no item ids.
        let session = try #require(result.status?.mediaSessionID)
        #expect(inserts.allSatisfy { $0.json["mediaSessionId"]?.intValue == session })
        #expect(inserts.allSatisfy { $0.json["insertBefore"] == nil })
        #expect(
            (loads + inserts).allSatisfy { ($0.json["items"]?.arrayValue ?? []).allSatisfy { $0["itemId"] == nil } })
        #expect(loads.first?.json["repeatMode"] == "REPEAT_ALL")
        #expect(await device.queueContentIDs() == Self.contentIDs)
        #expect(await device.queueItemIDs() == Array(1...600))
        #expect(
            result.progress
                == QueueCastProgress(
                    totalItems: 600, deliveredItems: 600, totalMessages: 1 + inserts.count,
                    deliveredMessages: 1 + inserts.count,
                    mediaSessionID: session, resumptions: 0, isComplete: true))
        #expect(await sender.queueCastProgress?.isComplete == true)
    }

    @Test("a start item past the first message is jumped to once all items are in")
    func deferredStart() async throws {
        let (device, sender) = try await launchedSender()
        _ = try await sender.queueLoad(items: Self.items, startIndex: 450)
        #expect(await device.received(type: "QUEUE_LOAD").first?.json["startIndex"] == 0)
        let update = try #require(await device.received(type: "QUEUE_UPDATE").last)
        #expect(update.json["currentItemId"] == 451)
        #expect(await sender.state.media?.currentItemID == 451)
        #expect(await sender.state.media?.media?.contentID == Self.contentIDs[450])
    }

    @Test("a small queue is one QUEUE_LOAD starting where asked")
    func smallQueue() async throws {
        let (device, sender) = try await launchedSender()
        let result = try await sender.queueLoad(items: Array(Self.items.prefix(10)), startIndex: 3)
        #expect(await device.received(type: "QUEUE_INSERT").isEmpty)
        #expect(result.status?.currentItemID == 4)
        #expect(result.progress.totalMessages == 1)
    }

    @Test("an empty queue and a start index past the end are refused before sending")
    func refusedQueues() async throws {
        let (device, sender) = try await launchedSender()
        let empty = await senderError { _ = try await sender.queueLoad(items: []) }
        #expect(empty?.code == CastSenderError.Code.queuePlan)
        let past = await senderError {
            _ = try await sender.queueLoad(items: Array(Self.items.prefix(3)), startIndex: 7)
        }
        #expect(past?.code == CastSenderError.Code.requestInvalid)
        #expect(await device.received(type: "QUEUE_LOAD").isEmpty)
    }

    @Test("insert, remove, reorder, next, previous, repeat and shuffle change the device's queue")
    func editing() async throws {
        let (device, sender) = try await launchedSender()
        _ = try await sender.queueLoad(items: Array(Self.items.prefix(4)))
        try await sender.queueInsert([Fixture.queueItem(900)], before: 2)
        #expect(await device.queueItemIDs() == [1, 5, 2, 3, 4])
        try await sender.queueRemove(itemIDs: [3])
        #expect(await device.queueItemIDs() == [1, 5, 2, 4])
        try await sender.queueReorder(itemIDs: [4, 1], before: 5)
        #expect(await device.queueItemIDs() == [4, 1, 5, 2])
        #expect(try await sender.queueItemIDs() == [4, 1, 5, 2])
        try await sender.next()
        #expect(await sender.state.media?.currentItemID == 5)
        try await sender.previous()
        try await sender.previous()
        #expect(await sender.state.media?.currentItemID == 4)
        let end = await senderError { _ = try await sender.previous() }
        #expect(end?.explanation?.reason == "END_OF_QUEUE")
        try await sender.setRepeatMode(.all)
        try await sender.previous()
        #expect(await sender.state.media?.currentItemID == 2)
        #expect(await sender.state.queue?.repeatMode == .all)
        try await sender.shuffle()
        #expect(await device.queueItemIDs() == [2, 5, 1, 4])
        try await sender.jump(toItem: 1, startingAt: 30)
        #expect(await sender.state.media?.currentItemID == 1)
        #expect(await sender.state.media?.currentTime == 30)
    }

    @Test("a large insert is split like a large queue")
    func largeInsert() async throws {
        let (device, sender) = try await launchedSender()
        _ = try await sender.queueLoad(items: Array(Self.items.prefix(2)))
        try await sender.queueInsert(Array(Self.items.dropFirst(2)))
        #expect(await device.received(type: "QUEUE_INSERT").count >= 4)
        #expect(await device.largestBodySize <= CastFrame.maximumBodySize)
        #expect(await device.queueContentIDs() == Self.contentIDs)
    }

    @Test(
        "invalid queue edits are refused before sending",
        arguments: [
            ("remove nothing", "queue.item-ids-empty"), ("remove id 0", "queue.item-id-invalid"),
            ("reorder twice", "queue.item-id-duplicate"), ("reorder before itself", "queue.reorder-before-itself"),
        ])
    func invalidEdits(name: String, code: String) async throws {
        let (device, sender) = try await launchedSender()
        _ = try await sender.queueLoad(items: Array(Self.items.prefix(4)))
        let error = await senderError {
            switch name {
            case "remove nothing": _ = try await sender.queueRemove(itemIDs: [])
            case "remove id 0": _ = try await sender.queueRemove(itemIDs: [0])
            case "reorder twice": _ = try await sender.queueReorder(itemIDs: [2, 2])
            default: _ = try await sender.queueReorder(itemIDs: [2, 3], before: 3)
            }
        }
        #expect(error?.code == CastSenderError.Code.requestInvalid)
        #expect(error?.diagnostics.map(\.code.rawValue).contains(code) == true)
        #expect(await device.received(type: "QUEUE_REMOVE").isEmpty)
        #expect(await device.received(type: "QUEUE_REORDER").isEmpty)
    }

    @Test(
        "a batch cast interrupted by a dropped link picks up where it was, without duplicates",
        arguments: [
            "drop before the device applies the second insert",
            "drop after the device applies the second insert, before its reply",
            "drop after the device applies the QUEUE_LOAD, before its reply",
        ])
    func batchResumes(scenario: String) async throws {
        let (device, sender) = try await launchedSender()
        let counter = Counter()
        await device.setRule { request in
            guard request.link == 1 else { return .standard }
            if scenario.contains("QUEUE_LOAD") {
                return request.type == "QUEUE_LOAD" ? .dropAfterHandling : .standard
            }
            guard request.type == "QUEUE_INSERT", counter.increment() == 2 else { return .standard }
            return scenario.contains("before the device") ? .dropBeforeHandling : .dropAfterHandling
        }
        let result = try await sender.queueLoad(items: Self.items)
        #expect(result.progress.isComplete)
        #expect(result.progress.resumptions == 1)
        #expect(await device.queueContentIDs() == Self.contentIDs)
        #expect(await device.linkCount == 2)
        // Resuming is not reloading: one QUEUE_LOAD per link at most, and none after the drop.
        #expect(await device.received(type: "QUEUE_LOAD").filter { $0.link == 2 }.isEmpty)
        #expect(await device.received(type: "LOAD").isEmpty)
        #expect(await device.received(type: "QUEUE_GET_ITEM_IDS").contains { $0.link == 2 })
    }

    @Test("when reconnecting gives up, resumeQueueCast continues the recorded cast later")
    func resumeAfterGivingUp() async throws {
        let configuration = fastConfiguration(
            reconnect: ReconnectPolicy(
                initialDelay: .milliseconds(2), maximumDelay: .milliseconds(4), maximumAttempts: 2))
        let (device, sender) = try await launchedSender(configuration: configuration)
        let counter = Counter()
        await device.setRule { request in
            request.type == "QUEUE_INSERT" && counter.increment() == 2 ? .dropBeforeHandling : .standard
        }
        await device.refuseConnections(2)
        let error = await senderError { _ = try await sender.queueLoad(items: Self.items) }
        #expect(error?.code == CastSenderError.Code.reconnectFailed)
        let stopped = try #require(await sender.queueCastProgress)
        #expect(!stopped.isComplete)
        #expect(stopped.deliveredMessages == 2)
        await device.setRule(nil)
        try await sender.connect()
        let result = try await sender.resumeQueueCast()
        #expect(result.progress.isComplete)
        #expect(await device.queueContentIDs() == Self.contentIDs)
    }
}

/// A thread-safe counter for device rules, which run on the device's actor.
final class Counter: Sendable {
    private let value = Mutex(0)
    func increment() -> Int {
        value.withLock {
            $0 += 1
            return $0
        }
    }
}
