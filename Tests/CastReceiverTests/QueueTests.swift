import CastModel
import CastReceiver
import JSONSupport
import Testing

/// A QUEUE_LOAD of `count` items named `item-1.mp4`…, each `duration` seconds long.
func queueLoad(
    count: Int, duration: Double = 10, startIndex: Int = 0, repeatMode: String = "REPEAT_OFF",
    preloadTime: Double? = nil, requestID: Int = 2
) -> String {
    let items = (1...count).map { index in
        let preload = preloadTime.map { #","preloadTime":\#($0)"# } ?? ""
        return
            #"{"media":{"contentId":"http://media.example/item-\#(index).mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":\#(duration)},"autoplay":true\#(preload)}"#
    }
    return
        #"{"type":"QUEUE_LOAD","requestId":\#(requestID),"startIndex":\#(startIndex),"repeatMode":"\#(repeatMode)","items":[\#(items.joined(separator: ","))]}"#
}

extension Harness {
    /// The item ids in play order.
    var order: [Int] { status?.items?.compactMap(\.itemID) ?? [] }
    var currentItem: Int? { status?.currentItemID }

    /// Launches, QUEUE_LOADs and lets buffering finish.
    mutating func playQueue(_ payload: String) async {
        await launchDefaultMediaReceiver()
        await media(payload)
        await advance(by: 0.5)
    }
}

@Suite("Default Media Receiver: queues")
struct QueueTests {
    @Test("QUEUE_LOAD numbers items from 1 and starts at startIndex; status carries media for the current item only")
    func queueLoadAssignsIDs() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let outputs = await harness.media(queueLoad(count: 3, startIndex: 1))
        let reply = try #require(outputs.replies.first?.mediaStatus)
        #expect(reply["currentItemId"] == 2)
        #expect(reply["items"]?.arrayValue?.map { $0["itemId"] } == [1, 2, 3])
        #expect(reply["items"]?.arrayValue?.map { $0["media"] != nil } == [false, true, false])
        #expect(reply["media"]?["contentId"] == "http://media.example/item-2.mp4")
        #expect(reply["repeatMode"] == "REPEAT_OFF")
        #expect(harness.fetcher.requests == ["http://media.example/item-2.mp4"], "only the item that plays is fetched")
    }

    @Test("a LOAD with queueData plays its items as a queue")
    func loadWithQueueData() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let outputs = await harness.media(
            #"{"type":"LOAD","requestId":2,"queueData":{"name":"Mix","queueType":"PLAYLIST","repeatMode":"REPEAT_ALL","startIndex":1,"items":[{"media":{"contentId":"http://media.example/a.mp3","contentType":"audio/mpeg","streamType":"BUFFERED","duration":5}},{"media":{"contentId":"http://media.example/b.mp3","contentType":"audio/mpeg","streamType":"BUFFERED","duration":5}}]}}"#
        )
        let status = try #require(outputs.replies.first?.mediaStatus)
        #expect(status["currentItemId"] == 2)
        #expect(status["repeatMode"] == "REPEAT_ALL")
        #expect(
            status["queueData"] == [
                "name": "Mix", "queueType": "PLAYLIST", "repeatMode": "REPEAT_ALL", "startIndex": 1,
            ])
    }

    @Test(
        "the queue plays through per repeat mode",
        arguments: [
            // (repeat mode, item ids that play, in order, over 5 items' worth of time, and how it ends)
            ("REPEAT_OFF", [1, 2, 3], "IDLE/FINISHED"),
            ("REPEAT_ALL", [1, 2, 3, 1, 2], nil),
            ("REPEAT_SINGLE", [1, 1, 1, 1, 1], nil),
        ])
    func playThrough(mode: String, played: [Int], ending: String?) async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 3, repeatMode: mode))
        var seen = [harness.currentItem ?? 0]
        var sessions = [harness.status?.mediaSessionID ?? 0]
        var last: [ReceiverOutput] = []
        for _ in 1..<played.count {
            last = await harness.advance(by: 10)  // the item ends: FINISHED, LOADING, BUFFERING
            guard harness.status != nil else { break }
            #expect(last.broadcastStates.first == "IDLE/FINISHED")
            #expect(
                last.broadcasts.first?.mediaStatus?["loadingItemId"] != nil,
                "FINISHED with loadingItemId: the queue goes on")
            await harness.advance(by: 0.5)
            seen.append(harness.currentItem ?? 0)
            sessions.append(harness.status?.mediaSessionID ?? 0)
        }
        if let ending {
            last = await harness.advance(by: 10)
            #expect(last.broadcastStates == [ending])
            #expect(last.broadcasts.first?.mediaStatus?["loadingItemId"] == nil)
            #expect(harness.status == nil)
        }
        #expect(seen == played)
        #expect(Set(sessions).count == sessions.count, "each item gets a new mediaSessionId")
    }

    @Test("REPEAT_ALL_AND_SHUFFLE reshuffles at every wrap, the same way for the same seed")
    func repeatAllAndShuffle() async throws {
        func orders(seed: UInt64) async -> [[Int]] {
            var configuration = Harness.testConfiguration
            configuration.seed = seed
            var harness = Harness(configuration: configuration)
            await harness.playQueue(queueLoad(count: 5, repeatMode: "REPEAT_ALL_AND_SHUFFLE"))
            var orders = [harness.order]
            for _ in 0..<3 {
                for _ in 0..<5 {
                    await harness.advance(by: 10)
                    await harness.advance(by: 0.5)
                }
                orders.append(harness.order)
            }
            return orders
        }
        let first = await orders(seed: 7)
        #expect(first == (await orders(seed: 7)))
        #expect(first[0] == [1, 2, 3, 4, 5], "the first pass plays in the loaded order")
        #expect(first.dropFirst().allSatisfy { Set($0) == [1, 2, 3, 4, 5] })
        #expect(Set(first.dropFirst()).count > 1, "each wrap reshuffles")
        #expect(first != (await orders(seed: 8)))
    }

    @Test("QUEUE_INSERT appends, inserts before an item, and can jump to an inserted item")
    func queueInsert() async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 2))
        let item =
            #"{"media":{"contentId":"http://media.example/new.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":10}}"#
        let appended = await harness.media(
            #"{"type":"QUEUE_INSERT","requestId":3,"mediaSessionId":1,"items":[\#(item)]}"#)
        #expect(harness.order == [1, 2, 3])
        #expect(appended.replies.first?.requestID == 3)
        #expect(appended.broadcasts.count == 1)
        await harness.media(#"{"type":"QUEUE_INSERT","requestId":4,"insertBefore":2,"items":[\#(item),\#(item)]}"#)
        #expect(harness.order == [1, 4, 5, 2, 3])
        #expect(harness.currentItem == 1)
        await harness.media(
            #"{"type":"QUEUE_INSERT","requestId":5,"insertBefore":1,"currentItemIndex":0,"currentTime":3,"items":[\#(item)]}"#
        )
        #expect(harness.order == [6, 1, 4, 5, 2, 3])
        #expect(harness.currentItem == 6)
        await harness.advance(by: 0.5)
        #expect(harness.status?.currentTime == 3)
    }

    @Test(
        "QUEUE_INSERT errors",
        arguments: [
            #"{"type":"QUEUE_INSERT","requestId":3,"insertBefore":99,"items":[{"media":{"contentId":"http://media.example/n.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}]}"#,
            #"{"type":"QUEUE_INSERT","requestId":3,"items":[{"itemId":7,"media":{"contentId":"http://media.example/n.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}]}"#,
            #"{"type":"QUEUE_INSERT","requestId":3,"items":[]}"#,
            #"{"type":"QUEUE_INSERT","requestId":3}"#,
        ])
    func queueInsertErrors(payload: String) async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 2))
        let outputs = await harness.media(payload)
        #expect(
            outputs.messages.map(\.payload) == [
                ["type": "INVALID_REQUEST", "requestId": 3, "reason": "INVALID_PARAMS"]
            ])
        #expect(harness.order == [1, 2])
    }

    @Test(
        "QUEUE_UPDATE jump moves through the queue, wrapping unless REPEAT_OFF",
        arguments: [
            ("REPEAT_OFF", 1, 2), ("REPEAT_OFF", -1, nil), ("REPEAT_OFF", 5, nil),
            ("REPEAT_ALL", -1, 3), ("REPEAT_ALL", 4, 2), ("REPEAT_SINGLE", 1, 2), ("REPEAT_ALL_AND_SHUFFLE", -2, 2),
        ])
    func jump(mode: String, jump: Int, landsOn: Int?) async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 3, repeatMode: mode))
        let outputs = await harness.media(#"{"type":"QUEUE_UPDATE","requestId":4,"mediaSessionId":1,"jump":\#(jump)}"#)
        if let landsOn {
            #expect(harness.currentItem == landsOn)
            #expect(outputs.replies.first?.mediaStatus?["currentItemId"] == .number(JSONNumber(landsOn)))
        } else {
            #expect(
                outputs.messages.map(\.payload) == [
                    ["type": "INVALID_REQUEST", "requestId": 4, "reason": "END_OF_QUEUE"]
                ])
            #expect(harness.currentItem == 1)
        }
    }

    @Test("QUEUE_NEXT and QUEUE_PREV move by one")
    func nextAndPrevious() async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 3))
        await harness.media(#"{"type":"QUEUE_NEXT","requestId":3}"#)
        await harness.media(#"{"type":"QUEUE_NEXT","requestId":4}"#)
        #expect(harness.currentItem == 3)
        await harness.media(#"{"type":"QUEUE_PREV","requestId":5}"#)
        #expect(harness.currentItem == 2)
    }

    @Test("QUEUE_UPDATE sets currentItemId, repeatMode, shuffle and item contents")
    func queueUpdate() async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 4))
        await harness.media(#"{"type":"QUEUE_UPDATE","requestId":3,"currentItemId":3,"currentTime":4}"#)
        #expect(harness.currentItem == 3)
        await harness.advance(by: 0.5)
        #expect(harness.status?.currentTime == 4)
        await harness.media(
            #"{"type":"QUEUE_UPDATE","requestId":4,"repeatMode":"REPEAT_ALL","items":[{"itemId":1,"autoplay":false}]}"#)
        #expect(harness.status?.repeatMode == .all)
        #expect(harness.status?.items?.first?.autoplay == false)
        await harness.media(#"{"type":"QUEUE_UPDATE","requestId":5,"shuffle":true}"#)
        #expect(harness.order.first == 3, "the playing item stays current, first in the new order")
        #expect(Set(harness.order) == [1, 2, 3, 4])
        let unknownItem = await harness.media(
            #"{"type":"QUEUE_UPDATE","requestId":6,"items":[{"itemId":42,"autoplay":false}]}"#)
        #expect(unknownItem.messages.first?.payload["reason"] == "INVALID_PARAMS")
        let badMode = await harness.media(#"{"type":"QUEUE_UPDATE","requestId":7,"repeatMode":"REPEAT_SOMETIMES"}"#)
        #expect(badMode.messages.first?.payload["reason"] == "INVALID_PARAMS")
    }

    @Test("QUEUE_REMOVE of the current item plays the next; of everything ends the queue")
    func queueRemove() async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 4))
        await harness.media(#"{"type":"QUEUE_REMOVE","requestId":3,"itemIds":[3]}"#)
        #expect(harness.order == [1, 2, 4])
        #expect(harness.currentItem == 1)
        await harness.media(#"{"type":"QUEUE_REMOVE","requestId":4,"itemIds":[1,99]}"#)
        #expect(harness.order == [2, 4])
        #expect(harness.currentItem == 2, "the item after the removed current one takes over")
        let unknown = await harness.media(#"{"type":"QUEUE_REMOVE","requestId":5,"itemIds":[99]}"#)
        #expect(unknown.messages.first?.payload["reason"] == "INVALID_PARAMS")
        let all = await harness.media(#"{"type":"QUEUE_REMOVE","requestId":6,"itemIds":[2,4]}"#)
        #expect(all.replies.first?.mediaStatus?["idleReason"] == "CANCELLED")
        #expect(all.broadcastStates == ["IDLE/CANCELLED"])
        #expect(harness.status == nil)
    }

    @Test("QUEUE_REORDER moves items before another, or to the end; the current item stays current")
    func queueReorder() async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 5))
        await harness.media(#"{"type":"QUEUE_REORDER","requestId":3,"itemIds":[5,4],"insertBefore":2}"#)
        #expect(harness.order == [1, 5, 4, 2, 3])
        await harness.media(#"{"type":"QUEUE_REORDER","requestId":4,"itemIds":[1]}"#)
        #expect(harness.order == [5, 4, 2, 3, 1])
        #expect(harness.currentItem == 1)
        let bad = await harness.media(#"{"type":"QUEUE_REORDER","requestId":5,"itemIds":[2],"insertBefore":2}"#)
        #expect(bad.messages.first?.payload["reason"] == "INVALID_PARAMS")
        // After the reorder item 1 is last, so REPEAT_OFF ends the queue after it.
        let end = await harness.advance(by: 10)
        #expect(end.broadcastStates == ["IDLE/FINISHED"])
    }

    @Test("QUEUE_GET_ITEM_IDS and QUEUE_GET_ITEMS return the queue with full media")
    func queueItems() async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 3))
        let ids = await harness.media(#"{"type":"QUEUE_GET_ITEM_IDS","requestId":3}"#)
        #expect(ids.messages.map(\.payload) == [["type": "QUEUE_ITEM_IDS", "requestId": 3, "itemIds": [1, 2, 3]]])
        let items = await harness.media(#"{"type":"QUEUE_GET_ITEMS","requestId":4,"itemIds":[3,1,77]}"#)
        let listed = items.messages.first?.payload["items"]?.arrayValue ?? []
        #expect(listed.map { $0["itemId"] } == [3, 1])
        #expect(listed.allSatisfy { $0["media"]?["contentId"] != nil })
        let mixed = await harness.media(#"{"type":"QUEUE_GET_ITEMS","requestId":5,"itemIds":[2,"x",3.0]}"#)
        #expect(mixed.messages.first?.payload["items"]?.arrayValue?.map { $0["itemId"] } == [2, 3])
    }

    @Test(
        "preloadTime: the next item loads early (loadingItemId, then preloadedItemId) and starts without a second fetch"
    )
    func preload() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        harness.holdsFetches = true
        await harness.media(queueLoad(count: 2, duration: 30, preloadTime: 5))
        await harness.releaseFetches()
        await harness.advance(by: 0.5)
        let early = await harness.advance(by: 24.9)
        #expect(early.isEmpty)
        let preloading = await harness.advance(by: 0.1)
        #expect(preloading.broadcasts.first?.mediaStatus?["loadingItemId"] == 2)
        #expect(harness.heldFetches.map(\.itemID) == [2])
        let preloaded = await harness.releaseFetches()
        #expect(preloaded.broadcasts.first?.mediaStatus?["preloadedItemId"] == 2)
        #expect(preloaded.broadcasts.first?.mediaStatus?["loadingItemId"] == nil)
        let next = await harness.advance(by: 5)
        #expect(next.broadcastStates == ["IDLE/FINISHED", "IDLE+LOADING", "BUFFERING"])
        #expect(harness.heldFetches.isEmpty, "the preload answered for the load")
        #expect(harness.currentItem == 2)
        #expect(harness.fetcher.requests.count == 2)
    }

    @Test("an item that cannot play fails when the queue reaches it: LOAD_FAILED broadcast with requestId 0")
    func failingItemMidQueue() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        let load =
            #"{"type":"QUEUE_LOAD","requestId":2,"items":[{"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":10}},{"media":{"contentId":"http://media.example/b.mkv","contentType":"video/x-matroska","streamType":"BUFFERED","duration":10}}]}"#
        let accepted = await harness.media(load)
        #expect(accepted.replies.first?.type == "MEDIA_STATUS", "the queue is accepted: its first item plays")
        await harness.advance(by: 0.5)
        let reached = await harness.advance(by: 10)
        let failure = try #require(reached.messages(type: "LOAD_FAILED").first)
        #expect(failure.payload == ["type": "LOAD_FAILED", "requestId": 0, "detailedErrorCode": 104, "itemId": 2])
        #expect(failure.isBroadcast)
        #expect(reached.broadcastStates.last == "IDLE/ERROR")
    }
}

@Suite("Bounds on untrusted input")
struct BoundsTests {
    static func items(_ count: Int) -> String {
        (0..<count).map {
            #"{"media":{"contentId":"http://m/\#($0)","contentType":"video/mp4","streamType":"BUFFERED"}}"#
        }
        .joined(separator: ",")
    }

    @Test("a queue is kept to 1000 items; an insert beyond that is INVALID_PARAMS")
    func queueLimit() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        await harness.media(#"{"type":"QUEUE_LOAD","requestId":2,"items":[\#(Self.items(500))]}"#)
        await harness.media(#"{"type":"QUEUE_INSERT","requestId":3,"items":[\#(Self.items(450))]}"#)
        #expect(harness.order.count == 950)
        let over = await harness.media(#"{"type":"QUEUE_INSERT","requestId":4,"items":[\#(Self.items(51))]}"#)
        #expect(
            over.messages.map(\.payload) == [["type": "INVALID_REQUEST", "requestId": 4, "reason": "INVALID_PARAMS"]])
        #expect(harness.log.contains { $0.diagnostics.contains { $0.code == "queue.too-long" } })
    }

    @Test("a message over 64 KiB is dropped unparsed, as the transport would")
    func oversizedMessage() async throws {
        var harness = Harness()
        await harness.connect()
        let padding = String(repeating: "x", count: 70_000)
        let outputs = await harness.send(#"{"type":"GET_STATUS","requestId":1,"pad":"\#(padding)"}"#)
        #expect(outputs.isEmpty)
        #expect(harness.log.last?.note?.contains("devices refuse frames over 65536 bytes") == true)
    }
}
