import CastModel
import CastReceiver
import JSONSupport
import Testing
import TestSupport

/// Golden files of representative device messages: what a sender sees on the wire.
@Suite("Golden replies")
struct SnapshotTests {
    func pretty(_ messages: [OutgoingMessage]) -> String {
        messages.map { message in
            "// \(message.sender) \(message.sourceID) → \(message.destinationID) \(message.namespace.rawValue)\n"
                + JSONWriter.pretty.string(from: message.payload)
        }.joined(separator: "\n") + "\n"
    }

    @Test("RECEIVER_STATUS after LAUNCH (reply and broadcast)")
    func receiverStatusAfterLaunch() async throws {
        var harness = Harness()
        await harness.connect()
        let outputs = await harness.send(
            #"{"type":"LAUNCH","requestId":1,"appId":"CC1AD845","language":"en-US","supportedAppTypes":["WEB"]}"#)
        Snapshot.assertMatches(pretty(outputs.messages), named: "launch-receiver-status.json")
    }

    @Test("MEDIA_STATUS through a LOAD: LOADING, BUFFERING reply, PLAYING")
    func loadSequence() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        var messages = await harness.media(
            #"{"type":"LOAD","requestId":2,"autoplay":true,"activeTrackIds":[1],"media":{"contentId":"http://media.example/bbb.mp4","contentType":"video/mp4","streamType":"BUFFERED","duration":596,"metadata":{"metadataType":1,"title":"Big Buck Bunny"},"tracks":[{"trackId":1,"type":"TEXT","subtype":"SUBTITLES","trackContentId":"http://media.example/bbb.en.vtt","trackContentType":"text/vtt","language":"en"}]}}"#
        ).messages
        messages += await harness.advance(by: 0.5).messages
        Snapshot.assertMatches(pretty(messages), named: "load-sequence.json")
    }

    @Test("LOAD_FAILED and INVALID_REQUEST")
    func errors() async throws {
        var harness = Harness()
        await harness.launchDefaultMediaReceiver()
        var messages = await harness.media(
            #"{"type":"LOAD","requestId":2,"media":{"contentId":"http://media.example/a.mkv","contentType":"video/x-matroska","streamType":"BUFFERED"}}"#
        ).messages
        messages += await harness.media(
            #"{"type":"LOAD","requestId":3,"media":{"contentId":"http://media.example/a.mp4","contentType":"video/mp4","streamType":"STREAMING"}}"#
        ).messages
        Snapshot.assertMatches(pretty(messages), named: "load-errors.json")
    }

    @Test("a queue at the end of an item: FINISHED with loadingItemId, then the next item")
    func queueAdvance() async throws {
        var harness = Harness()
        await harness.playQueue(queueLoad(count: 3, duration: 4, repeatMode: "REPEAT_ALL"))
        let messages = await harness.advance(by: 4).messages
        Snapshot.assertMatches(pretty(messages), named: "queue-advance.json")
    }

    @Test("the message log of a short session, one JSON line per entry")
    func messageLog() async throws {
        var harness = Harness()
        await harness.launchAndLoad(duration: 5)
        await harness.advance(by: 0.5)
        await harness.media(#"{"type":"PAUSE","requestId":3,"mediaSessionId":1}"#)
        let lines = harness.log.map(\.jsonLine)
        #expect(lines.allSatisfy { line in (try? JSONParser().parse(line).value["direction"]) != nil })
        Snapshot.assertMatches(lines.joined(separator: "\n") + "\n", named: "session-log.jsonl")
    }
}
