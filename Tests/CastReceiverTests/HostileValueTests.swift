import CastModel
import CastReceiver
import JSONSupport
import Testing

/// Times from senders and servers that once trapped the receiver's clock arithmetic
/// (`Int64(seconds * 1_000_000)` on 1e300).
@Suite("Default Media Receiver: absurd times from senders and servers")
struct HostileValueTests {
    @Test(
        "a declared or measured duration of 1e15…1e300 s plays, reports the value, and never finishes early",
        arguments: [
            (1e300, nil), (1e19, nil), (60.0, 1e15), (60.0, 1e300),
        ] as [(Double, Double?)])
    func hugeDurations(declared: Double, measured: Double?) async throws {
        let fetcher = ScriptedFetcher()
        if let measured { fetcher.script("http://media.example/bbb.mp4", .available(duration: measured, notes: [])) }
        var harness = Harness(fetcher: fetcher)
        await harness.launchAndLoad(duration: declared)
        let playing = await harness.advance(by: 0.5)
        #expect(playing.broadcastStates == ["PLAYING"])
        let later = await harness.advance(by: 3600)
        #expect(later.broadcastStates.isEmpty, "an hour into a 1e15 s item is not its end")
        #expect(harness.status?.currentTime == 3600)
        #expect(harness.status?.media?.duration == measured ?? declared)
    }

    @Test(
        "SEEK and LOAD currentTime of 1e300 are clamped to the item's end; relative jumps of 1e300 too",
        arguments: [
            #"{"type":"SEEK","requestId":4,"currentTime":1e300}"#,
            #"{"type":"SEEK","requestId":4,"relativeTime":1e300}"#,
        ])
    func hugeSeeks(seek: String) async throws {
        var harness = Harness()
        await harness.launchAndLoad(duration: 60)
        await harness.advance(by: 0.5)
        let outputs = await harness.media(seek)
        #expect(outputs.replies.first?.mediaStatus?["currentTime"]?.doubleValue == 60)
    }

    @Test("a SEEK far into an item of unknown length keeps a finite clock")
    func hugeSeekWithoutDuration() async throws {
        let fetcher = ScriptedFetcher(["http://media.example/bbb.mp4": .available(duration: nil, notes: [])])
        var harness = Harness(fetcher: fetcher)
        await harness.launchDefaultMediaReceiver()
        await harness.media(
            #"{"type":"LOAD","requestId":2,"currentTime":1e300,"media":{"contentId":"http://media.example/bbb.mp4","contentType":"video/mp4","streamType":"BUFFERED"}}"#
        )
        await harness.advance(by: 0.5)
        let outputs = await harness.media(#"{"type":"SEEK","requestId":4,"currentTime":1e308}"#)
        #expect(outputs.replies.first?.mediaStatus?["currentTime"]?.doubleValue == 1e308)
        let later = await harness.advance(by: 10)
        #expect(later.broadcastStates.isEmpty)
    }
}
