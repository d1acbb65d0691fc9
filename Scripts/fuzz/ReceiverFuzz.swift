// libFuzzer entry point for the receiver's Default Media Receiver: media messages with
// whatever numbers a sender or server can send (durations, currentTime, relativeTime,
// playback rates, volumes, 1e300 and beyond) against its playback clock, which once trapped
// converting them to microseconds. Built by Scripts/fuzz/receiver.
//
// The input is lines: `+SECONDS` advances the clock, `=SECONDS` sets the duration the next
// fetch measures (`=` alone: unknown), anything else is a media-namespace payload sent to the
// running Default Media Receiver. Every output is encoded as a device would send it.
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
        } else if line.hasPrefix("=") {
            fuzz.measured = Double(line.dropFirst())
        } else {
            fuzz.settle(fuzz.device.receive(sender: "s", source: "sender-0", destination: transport, namespace: .media, payload: String(line)))
        }
    }
    return 0
}
