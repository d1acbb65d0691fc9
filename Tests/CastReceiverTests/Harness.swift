import CastModel
import CastReceiver
import JSONSupport
import Synchronization
import Testing

/// A scripted ``MediaFetching``: the network boundary replaced by a table of answers, with
/// every request recorded. URLs not in the table are available (duration from the LOAD).
final class ScriptedFetcher: MediaFetching {
    private let state: Mutex<(outcomes: [String: MediaFetchOutcome], requests: [String])>

    init(_ outcomes: [String: MediaFetchOutcome] = [:]) {
        state = Mutex((outcomes, []))
    }

    func availability(of media: MediaInformation, origin: String) async -> MediaFetchOutcome {
        let url = media.playbackURL ?? ""
        return state.withLock { state in
            state.requests.append(url)
            return state.outcomes[url] ?? .playable
        }
    }

    func script(_ url: String, _ outcome: MediaFetchOutcome) { state.withLock { $0.outcomes[url] = outcome } }
    var requests: [String] { state.withLock { $0.requests } }
}

/// Drives a ``ReceiverDevice`` the way ``ReceiverHost`` does, but step by step: inputs at a
/// manual time, fetch requests answered by a ``ScriptedFetcher`` (at once, or held until
/// ``releaseFetches()`` when `holdsFetches` is set).
struct Harness {
    var device: ReceiverDevice
    let fetcher: ScriptedFetcher
    var time: Duration = .zero
    var holdsFetches = false
    var heldFetches: [MediaFetchRequest] = []
    var log: [ReceiverLogEntry] = []

    static let testConfiguration = ReceiverConfiguration(seed: 42)

    init(
        configuration: ReceiverConfiguration = Harness.testConfiguration, faults: ReceiverFaults = ReceiverFaults(),
        fetcher: ScriptedFetcher = ScriptedFetcher()
    ) {
        device = ReceiverDevice(configuration: configuration, faults: faults)
        self.fetcher = fetcher
    }

    /// Answers fetch requests among `outputs` (unless held) and returns everything for the transport.
    mutating func settle(_ outputs: [ReceiverOutput]) async -> [ReceiverOutput] {
        var result: [ReceiverOutput] = []
        var pending = outputs
        while !pending.isEmpty {
            let output = pending.removeFirst()
            guard case .fetchMedia(let request) = output else {
                result.append(output)
                continue
            }
            if holdsFetches {
                heldFetches.append(request)
                continue
            }
            let outcome = await fetcher.availability(of: request.media, origin: request.origin)
            pending += device.completeFetch(request, outcome: outcome)
        }
        log += device.takeLog()
        return result
    }

    @discardableResult
    mutating func connect(
        _ sender: SenderID = "phone", source: String = "sender-0", to destination: String = CastEndpoint.platform
    ) async -> [ReceiverOutput] {
        await settle(device.connect(sender: sender, source: source, destination: destination))
    }

    @discardableResult
    mutating func send(
        _ payload: String, from sender: SenderID = "phone", source: String = "sender-0", to destination: String? = nil,
        namespace: CastNamespace? = nil
    ) async -> [ReceiverOutput] {
        let namespace = namespace ?? (destination == nil || destination == CastEndpoint.platform ? .receiver : .media)
        let target = destination ?? CastEndpoint.platform
        return await settle(
            device.receive(sender: sender, source: source, destination: target, namespace: namespace, payload: payload))
    }

    /// Sends on the media namespace to the running app.
    @discardableResult
    mutating func media(_ payload: String, from sender: SenderID = "phone", source: String = "sender-0") async
        -> [ReceiverOutput]
    {
        await send(payload, from: sender, source: source, to: transportID, namespace: .media)
    }

    @discardableResult
    mutating func advance(by seconds: Double) async -> [ReceiverOutput] {
        time += .milliseconds(Int64((seconds * 1000).rounded()))
        return await settle(device.advance(to: time))
    }

    @discardableResult
    mutating func releaseFetches(_ outcome: MediaFetchOutcome? = nil) async -> [ReceiverOutput] {
        var outputs: [ReceiverOutput] = []
        let requests = heldFetches
        heldFetches.removeAll()
        for request in requests {
            let answer: MediaFetchOutcome
            if let outcome {
                answer = outcome
            } else {
                answer = await fetcher.availability(of: request.media, origin: request.origin)
            }
            outputs += device.completeFetch(request, outcome: answer)
        }
        return await settle(outputs)
    }

    var transportID: String { device.runningApp?.transportID ?? "no-app" }

    /// Connects `senders` to receiver-0, launches the Default Media Receiver from the first
    /// and connects every sender to the app.
    mutating func launchDefaultMediaReceiver(senders: [SenderID] = ["phone"]) async {
        for sender in senders { await connect(sender) }
        await send(#"{"type":"LAUNCH","requestId":1,"appId":"CC1AD845"}"#, from: senders[0])
        for sender in senders { await connect(sender, to: transportID) }
    }

    /// Launches and loads `url` as BUFFERED media of `duration` seconds.
    @discardableResult
    mutating func launchAndLoad(
        _ url: String = "http://media.example/bbb.mp4", duration: Double = 60,
        contentType: String = "video/mp4", senders: [SenderID] = ["phone"]
    ) async -> [ReceiverOutput] {
        await launchDefaultMediaReceiver(senders: senders)
        return await media(
            #"{"type":"LOAD","requestId":2,"media":{"contentId":"\#(url)","contentType":"\#(contentType)","streamType":"BUFFERED","duration":\#(duration)}}"#,
            from: senders[0])
    }

    var status: MediaStatus? { device.mediaStatus }
}

extension Array where Element == ReceiverOutput {
    var messages: [OutgoingMessage] { compactMap(\.message) }

    func messages(type: String) -> [OutgoingMessage] { messages.filter { $0.type == type } }

    /// Messages answering a request (not broadcasts).
    var replies: [OutgoingMessage] { messages.filter { !$0.isBroadcast } }

    var broadcasts: [OutgoingMessage] { messages.filter(\.isBroadcast) }

    /// The `playerState` of each MEDIA_STATUS broadcast, with the idle reason or extended state.
    var broadcastStates: [String] {
        broadcasts.filter { $0.type == "MEDIA_STATUS" }.map { message in
            guard let status = message.payload["status"]?[0] else { return "none" }
            var text = status["playerState"]?.stringValue ?? "?"
            if let reason = status["idleReason"]?.stringValue { text += "/" + reason }
            if let extended = status["extendedStatus"]?["playerState"]?.stringValue { text += "+" + extended }
            return text
        }
    }
}

extension OutgoingMessage {
    /// The first MediaStatus in a MEDIA_STATUS payload.
    var mediaStatus: JSONValue? { payload["status"]?[0] }
}
