// libFuzzer entry point for the receiver's Default Media Receiver: media messages with
// whatever numbers a sender or server can send (durations, currentTime, relativeTime,
// playback rates, volumes, 1e300 and beyond) against its playback clock, which once trapped
// converting them to microseconds. Built by Scripts/fuzz/receiver.
//
// The input is lines: `+SECONDS` advances the clock, `=SECONDS` sets the duration the next
// fetch measures (`=` alone: unknown), `!JSON` is a MEDIA_STATUS or RECEIVER_STATUS as any
// device may send it, rendered through the status line `control` and `status` print (its
// clock and volume once trapped on 1e300 and 1e17), anything else is a media-namespace payload
// sent to the running Default Media Receiver. Every output is encoded as a device would send
// it, and the emulator's own status is rendered through the status line too.
import CastModel
import CastReceiver
import JSONSupport

/// One device on a manual clock, with fetches answered at once.
struct FuzzDevice {
    var device = ReceiverDevice(configuration: ReceiverConfiguration(seed: 1))
    var time = Duration.zero
    var measured: Double?

    mutating func settle(_ outputs: [ReceiverOutput]) {
        var pending = outputs
        while !pending.isEmpty {
            let output = pending.removeFirst()
            switch output {
            case .fetchMedia(let request):
                pending += device.completeFetch(request, outcome: .available(duration: measured, notes: []))
            case .message(let message):
                _ = message.payloadText
            default:
                break
            }
        }
        _ = device.takeLog()
        if let status = device.mediaStatus { _ = JSONWriter.compact.string(from: status.jsonValue) }
        render(PlaybackSummary(device: "fuzz", app: "Default Media Receiver", media: device.mediaStatus, volume: device.volume))
    }
}

/// Renders the status line and its JSON, as `castprep status` does.
func render(_ summary: PlaybackSummary) {
    _ = summary.line
    _ = JSONWriter.compact.string(from: summary.jsonValue)
}

/// A status message from the wire, decoded leniently as the sender does, then rendered.
func renderWireStatus(_ text: Substring) {
    guard let value = try? JSONParser().parse(String(text)).value else { return }
    var findings: [Diagnostic] = []
    if let message = MediaStatusMessage.decode(from: value, at: .root, diagnostics: &findings) {
        for status in message.status { render(PlaybackSummary(device: "fuzz", app: nil, media: status, volume: status.volume)) }
    }
    if let message = ReceiverStatusMessage.decode(from: value, at: .root, diagnostics: &findings) {
        render(PlaybackSummary(device: "fuzz", app: message.status?.applications?.first?.displayName, media: nil, volume: message.status?.volume))
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    var fuzz = FuzzDevice()
    fuzz.settle(fuzz.device.connect(sender: "s", source: "sender-0", destination: CastEndpoint.platform))
    fuzz.settle(fuzz.device.receive(sender: "s", source: "sender-0", destination: CastEndpoint.platform, namespace: .receiver,
                                    payload: #"{"type":"LAUNCH","requestId":1,"appId":"CC1AD845"}"#))
    guard let transport = fuzz.device.runningApp?.transportID else { return 0 }
    fuzz.settle(fuzz.device.connect(sender: "s", source: "sender-0", destination: transport))
    for line in text.split(separator: "\n").prefix(64) {
        if line.hasPrefix("+") {
            // The harness's own clock stays in range: at most a day per step, in milliseconds.
            guard let seconds = Double(line.dropFirst()), seconds.isFinite, seconds > 0 else { continue }
            fuzz.time += .milliseconds(Int64(min(seconds, 86_400) * 1000))
            fuzz.settle(fuzz.device.advance(to: fuzz.time))
        } else if line.hasPrefix("!") {
            renderWireStatus(line.dropFirst())
        } else if line.hasPrefix("=") {
            fuzz.measured = Double(line.dropFirst())
        } else {
            fuzz.settle(fuzz.device.receive(sender: "s", source: "sender-0", destination: transport, namespace: .media, payload: String(line)))
        }
    }
    return 0
}
