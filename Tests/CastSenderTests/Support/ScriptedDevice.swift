import CastModel
import CastSender
import JSONSupport

/// A small Cast device for sender tests: the platform (apps, volume) and one Default Media
/// Receiver-like media session with a queue, answering like the traces in the protocol
/// reference (media replies addressed to `*`, item ids from 1, `mediaSessionId` per load).
///
/// Tests script it with a rule that sees every request and chooses a reaction: answer
/// normally, stay silent, answer with given messages, hold the answer for later, or drop
/// the link before or after applying the request.
actor ScriptedDevice {
    enum VirtualAction: Sendable, Hashable { case connect, close }

    /// A message the device received.
    struct Received: Sendable {
        let message: SenderMessage
        let json: JSONValue
        /// The link it came on (1 = first connection).
        let link: Int
        var type: String { json["type"]?.stringValue ?? "" }
        var requestID: Int? { json["requestId"]?.intValue }
    }

    struct VirtualEvent: Sendable, Hashable {
        let action: VirtualAction
        let from: String
        let to: String
        let link: Int
    }

    enum Reaction: Sendable {
        /// Apply the request and answer.
        case standard
        /// Apply nothing, answer nothing.
        case ignore
        /// Answer with these payloads instead (on the request's namespace).
        case reply([JSONValue])
        /// Apply the request now, deliver the answer when the test calls `releaseHeld`.
        case hold
        /// Drop the link without applying the request.
        case dropBeforeHandling
        /// Apply the request, then drop the link before answering.
        case dropAfterHandling
    }

    struct App: Sendable {
        var appID: String
        var displayName: String
        var sessionID: String
        var transportID: String
        var appType: String
    }

    // MARK: Recorded traffic

    private(set) var received: [Received] = []
    private(set) var virtualEvents: [VirtualEvent] = []
    /// The largest CastMessage body of any message received, as CastFrame computes it.
    private(set) var largestBodySize = 0
    private var links: [InMemoryLink] = []
    private var rule: (@Sendable (Received) -> Reaction)?
    private var held: [(link: InMemoryLink, messages: [SenderMessage])] = []
    private var connectionsToRefuse = 0

    // MARK: Platform state

    private(set) var apps: [App] = []
    private var appCounter = 0
    private var volumeLevel = 1.0
    private var muted = false
    /// When set, LAUNCH is answered before the app is up; a broadcast announces it shortly after.
    var announcesLaunchLater = false
    /// When set, LAUNCH gets no reply with its requestId, only the requestId-0 broadcast
    /// (what openscreen's receiver does).
    var answersLaunchByBroadcastOnly = false
    /// A fixed transport id for launched apps (old firmware used `web-5`); nil makes GUIDs.
    var fixedTransportID: String?
    static let launchableAppIDs: Set<String> = ["CC1AD845", "ABCD1234"]

    // MARK: Media state

    private var mediaSessionID: Int?
    private var nextMediaSessionID = 1
    private(set) var queue: [(id: Int, item: JSONValue)] = []
    private var nextItemID = 1
    private var currentItemID: Int?
    private var playerState = "IDLE"
    private var idleReason: String?
    private var currentTime = 0.0
    private var playbackRate = 1.0
    private var activeTrackIDs: [Int]?
    private var textTrackStyle: JSONValue?
    private var repeatMode = "REPEAT_OFF"

    // MARK: Test controls

    func setRule(_ rule: (@Sendable (Received) -> Reaction)?) { self.rule = rule }

    func refuseConnections(_ count: Int) { connectionsToRefuse = count }

    func setAnnouncesLaunchLater(_ flag: Bool) { announcesLaunchLater = flag }

    func setAnswersLaunchByBroadcastOnly(_ flag: Bool) { answersLaunchByBroadcastOnly = flag }

    func setFixedTransportID(_ id: String?) { fixedTransportID = id }

    /// Every received message of `type` (all namespaces).
    func received(type: String) -> [Received] { received.filter { $0.type == type } }

    /// The request types received, in order, leaving out GET_STATUS when asked.
    func receivedTypes() -> [String] { received.map(\.type) }

    var linkCount: Int { links.count }

    /// The content ids of the queue in order.
    func queueContentIDs() -> [String] { queue.compactMap { $0.item["media"]?["contentId"]?.stringValue } }

    func queueItemIDs() -> [Int] { queue.map(\.id) }

    /// Delivers the answers held by `.hold`, in arrival order or reversed.
    func releaseHeld(reversed: Bool = false) {
        let batches = reversed ? held.reversed() : held
        held = []
        for batch in batches {
            for message in batch.messages { batch.link.deliver(message) }
        }
    }

    var heldCount: Int { held.count }

    /// Drops the current link as a network failure would.
    func dropLink() { links.last?.drop() }

    /// Sends a message from the running app to every sender (`*`, requestId 0 unless given).
    func broadcast(_ json: JSONValue, namespace: CastNamespace = .media) {
        let source = namespace == .media ? (apps.first?.transportID ?? CastSender.platformID) : CastSender.platformID
        send(namespace, from: source, to: "*", json)
    }

    /// Starts an app with a playing video, as another sender would have done.
    func startAppAsAnotherSender(appID: String = "CC1AD845", media: JSONValue) {
        let app = startApp(appID: appID, appType: "WEB")
        _ = app
        startMediaSession(items: [["media": media, "autoplay": true]], startIndex: 0, currentTime: 42)
    }

    /// The app closes its connection to the sender (it crashed or another sender stopped it).
    func closeAppConnection() {
        guard let app = apps.first else { return }
        apps.removeAll()
        mediaSessionID = nil
        send(.connection, from: app.transportID, to: CastFrame.defaultSourceID, ["type": "CLOSE"])
    }

    // MARK: Links

    /// Every connection attempt, refused or not.
    private(set) var connectionAttempts = 0

    func openLink() throws -> InMemoryLink {
        connectionAttempts += 1
        if connectionsToRefuse > 0 {
            connectionsToRefuse -= 1
            throw LinkClosed()
        }
        let link = InMemoryLink(device: self, number: links.count + 1)
        links.append(link)
        return link
    }

    func virtualConnection(_ action: VirtualAction, from: String, to: String, on link: InMemoryLink) {
        virtualEvents.append(VirtualEvent(action: action, from: from, to: to, link: link.number))
    }

    // MARK: Receiving

    func receive(_ message: SenderMessage, on link: InMemoryLink) {
        let body = CastFrame.bodySize(
            payloadSize: message.payload.utf8.count, namespace: message.namespace, sourceID: message.sourceID,
            destinationID: message.destinationID)
        largestBodySize = max(largestBodySize, body)
        guard let json = try? JSONParser().parse(message.payload).value else { return }
        let request = Received(message: message, json: json, link: link.number)
        received.append(request)
        switch rule?(request) ?? .standard {
        case .ignore:
            return
        case .dropBeforeHandling:
            link.drop()
        case .reply(let payloads):
            for payload in payloads {
                link.deliver(outgoing(message.namespace, from: message.destinationID, to: message.sourceID, payload))
            }
        case .standard:
            for reply in handle(request) { link.deliver(reply) }
        case .hold:
            held.append((link, handle(request)))
        case .dropAfterHandling:
            _ = handle(request)
            link.drop()
        }
    }

    private func outgoing(_ namespace: CastNamespace, from: String, to: String, _ json: JSONValue) -> SenderMessage {
        SenderMessage(
            sourceID: from, destinationID: to, namespace: namespace, payload: JSONWriter.compact.string(from: json))
    }

    private func send(_ namespace: CastNamespace, from: String, to: String, _ json: JSONValue) {
        links.last?.deliver(outgoing(namespace, from: from, to: to, json))
    }

    private func handle(_ request: Received) -> [SenderMessage] {
        let message = request.message
        let id = request.requestID ?? 0
        switch message.namespace {
        case .receiver:
            return handlePlatform(request, requestID: id).map {
                outgoing(.receiver, from: CastSender.platformID, to: $0.broadcast ? "*" : message.sourceID, $0.json)
            }
        case .media:
            guard let app = apps.first(where: { $0.transportID == message.destinationID }) else { return [] }
            // Real devices address media replies to "*" while keeping the requester's id.
            return handleMedia(request, requestID: id).map { outgoing(.media, from: app.transportID, to: "*", $0) }
        default:
            return []
        }
    }

    // MARK: Platform

    private func handlePlatform(_ request: Received, requestID: Int) -> [(json: JSONValue, broadcast: Bool)] {
        let json = request.json
        switch request.type {
        case "GET_STATUS":
            return [(receiverStatus(requestID: requestID), false)]
        case "LAUNCH":
            let appID = json["appId"]?.stringValue ?? ""
            guard Self.launchableAppIDs.contains(appID) else {
                return [(["type": "LAUNCH_ERROR", "requestId": JSONValue(requestID), "reason": "NOT_FOUND"], false)]
            }
            let types = json["supportedAppTypes"]?.arrayValue?.compactMap(\.stringValue) ?? ["WEB"]
            apps.removeAll()
            mediaSessionID = nil
            if announcesLaunchLater {
                let reply = receiverStatus(requestID: requestID)
                let appType = types.contains("ANDROID_TV") ? "ANDROID_TV" : "WEB"
                Task {
                    try? await Task.sleep(for: .milliseconds(50))
                    self.finishLaunch(appID: appID, appType: appType)
                }
                return [(reply, false)]
            }
            _ = startApp(appID: appID, appType: types.contains("ANDROID_TV") ? "ANDROID_TV" : "WEB")
            if answersLaunchByBroadcastOnly { return [(receiverStatus(requestID: 0), true)] }
            return [(receiverStatus(requestID: requestID), false), (receiverStatus(requestID: 0), true)]
        case "STOP":
            apps.removeAll()
            mediaSessionID = nil
            return [(receiverStatus(requestID: requestID), false), (receiverStatus(requestID: 0), true)]
        case "SET_VOLUME":
            if let level = json["volume"]?["level"]?.doubleValue { volumeLevel = level }
            if let flag = json["volume"]?["muted"]?.boolValue { muted = flag }
            return [(receiverStatus(requestID: requestID), false)]
        case "GET_APP_AVAILABILITY":
            var availability: [String: JSONValue] = [:]
            for appID in json["appId"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                availability[appID] = Self.launchableAppIDs.contains(appID) ? "APP_AVAILABLE" : "APP_UNAVAILABLE"
            }
            return [
                (
                    [
                        "responseType": "GET_APP_AVAILABILITY", "requestId": JSONValue(requestID),
                        "availability": .object(availability),
                    ], false
                )
            ]
        default:
            return [
                (["type": "INVALID_REQUEST", "requestId": JSONValue(requestID), "reason": "INVALID_COMMAND"], false)
            ]
        }
    }

    private func finishLaunch(appID: String, appType: String) {
        _ = startApp(appID: appID, appType: appType)
        send(.receiver, from: CastSender.platformID, to: "*", receiverStatus(requestID: 0))
    }

    private func startApp(appID: String, appType: String) -> App {
        appCounter += 1
        // GUID-shaped like the ids current devices give (36 characters).
        let digits = String(appCounter)
        let guid = "4f6c2d1e-9a8b-4c7d-8e6f-" + String(repeating: "0", count: 12 - digits.count) + digits
        let app = App(
            appID: appID, displayName: appID == "CC1AD845" ? "Default Media Receiver" : "Test App",
            sessionID: guid, transportID: fixedTransportID ?? guid, appType: appType)
        apps = [app]
        return app
    }

    private func receiverStatus(requestID: Int) -> JSONValue {
        var status: [String: JSONValue] = [
            "volume": [
                "level": JSONValue(volumeLevel), "muted": .bool(muted), "controlType": "attenuation",
                "stepInterval": 0.05,
            ],
            "isActiveInput": true, "isStandBy": false,
        ]
        if !apps.isEmpty {
            status["applications"] = .array(
                apps.map { app in
                    [
                        "appId": .string(app.appID), "displayName": .string(app.displayName),
                        "sessionId": .string(app.sessionID),
                        "transportId": .string(app.transportID), "appType": .string(app.appType), "isIdleScreen": false,
                        "namespaces": [["name": .string(CastNamespace.media.rawValue)]],
                        "statusText": .string(app.displayName),
                    ]
                })
        }
        return ["type": "RECEIVER_STATUS", "requestId": JSONValue(requestID), "status": .object(status)]
    }

    // MARK: Media

    private func handleMedia(_ request: Received, requestID: Int) -> [JSONValue] {
        let json = request.json
        let rid = JSONValue(requestID)
        switch request.type {
        case "GET_STATUS":
            return [mediaStatus(requestID: requestID)]
        case "LOAD":
            guard let media = json["media"] else {
                return [["type": "INVALID_REQUEST", "requestId": rid, "reason": "INVALID_PARAMS"]]
            }
            var item: [String: JSONValue] = ["media": media]
            if let tracks = json["activeTrackIds"] { item["activeTrackIds"] = tracks }
            startMediaSession(items: [.object(item)], startIndex: 0, currentTime: json["currentTime"]?.doubleValue ?? 0)
            activeTrackIDs = json["activeTrackIds"]?.arrayValue?.compactMap(\.intValue)
            if json["autoplay"]?.boolValue == false { playerState = "PAUSED" }
            return [mediaStatus(requestID: requestID)]
        case "QUEUE_LOAD":
            let items = json["items"]?.arrayValue ?? []
            guard !items.isEmpty, items.allSatisfy({ $0["itemId"] == nil }) else {
                return [["type": "INVALID_REQUEST", "requestId": rid, "reason": "INVALID_PARAMS"]]
            }
            let start = json["startIndex"]?.intValue ?? 0
            startMediaSession(
                items: items, startIndex: min(max(0, start), items.count - 1),
                currentTime: json["currentTime"]?.doubleValue ?? 0)
            if let mode = json["repeatMode"]?.stringValue { repeatMode = mode }
            return [mediaStatus(requestID: requestID)]
        default:
            break
        }
        guard let session = mediaSessionID else {
            return [["type": "INVALID_PLAYER_STATE", "requestId": rid]]
        }
        guard json["mediaSessionId"]?.intValue == session else {
            return [["type": "INVALID_REQUEST", "requestId": rid, "reason": "INVALID_MEDIA_SESSION_ID"]]
        }
        switch request.type {
        case "PLAY": playerState = "PLAYING"
        case "PAUSE": playerState = "PAUSED"
        case "STOP":
            playerState = "IDLE"
            idleReason = "CANCELLED"
        case "SEEK":
            if let relative = json["relativeTime"]?.doubleValue {
                currentTime = max(0, currentTime + relative)
            } else if let time = json["currentTime"]?.doubleValue {
                currentTime = time
            }
            if json["resumeState"]?.stringValue == "PLAYBACK_PAUSE" { playerState = "PAUSED" }
            if json["resumeState"]?.stringValue == "PLAYBACK_START" { playerState = "PLAYING" }
        case "SET_PLAYBACK_RATE":
            if let rate = json["playbackRate"]?.doubleValue { playbackRate = rate }
        case "EDIT_TRACKS_INFO":
            if let ids = json["activeTrackIds"]?.arrayValue { activeTrackIDs = ids.compactMap(\.intValue) }
            if let style = json["textTrackStyle"] { textTrackStyle = style }
        case "QUEUE_INSERT":
            let items = (json["items"]?.arrayValue ?? []).map { item in
                defer { nextItemID += 1 }
                return (id: nextItemID, item: item)
            }
            let ids = items.map { JSONValue($0.id) }
            if let before = json["insertBefore"]?.intValue, let index = queue.firstIndex(where: { $0.id == before }) {
                queue.insert(contentsOf: items, at: index)
            } else {
                queue.append(contentsOf: items)
            }
            return [
                mediaStatus(requestID: requestID),
                ["type": "QUEUE_CHANGE", "requestId": 0, "changeType": "INSERT", "itemIds": .array(ids)],
            ]
        case "QUEUE_UPDATE":
            if let mode = json["repeatMode"]?.stringValue { repeatMode = mode }
            if json["shuffle"]?.boolValue == true { queue.reverse() }
            if let target = json["currentItemId"]?.intValue, queue.contains(where: { $0.id == target }) {
                currentItemID = target
                currentTime = json["currentTime"]?.doubleValue ?? 0
            }
            if let jump = json["jump"]?.intValue, let index = queue.firstIndex(where: { $0.id == currentItemID }) {
                var next = index + jump
                if repeatMode == "REPEAT_ALL" { next = ((next % queue.count) + queue.count) % queue.count }
                guard queue.indices.contains(next) else {
                    return [["type": "INVALID_REQUEST", "requestId": rid, "reason": "END_OF_QUEUE"]]
                }
                currentItemID = queue[next].id
                currentTime = 0
            }
        case "QUEUE_REMOVE":
            let ids = Set(json["itemIds"]?.arrayValue?.compactMap(\.intValue) ?? [])
            let currentIndex = queue.firstIndex { $0.id == currentItemID } ?? 0
            queue.removeAll { ids.contains($0.id) }
            if let current = currentItemID, ids.contains(current) {
                currentItemID = queue.isEmpty ? nil : queue[min(currentIndex, queue.count - 1)].id
            }
        case "QUEUE_REORDER":
            let ids = json["itemIds"]?.arrayValue?.compactMap(\.intValue) ?? []
            let moving = ids.compactMap { id in queue.first { $0.id == id } }
            queue.removeAll { ids.contains($0.id) }
            if let before = json["insertBefore"]?.intValue, let index = queue.firstIndex(where: { $0.id == before }) {
                queue.insert(contentsOf: moving, at: index)
            } else {
                queue.append(contentsOf: moving)
            }
        case "QUEUE_GET_ITEM_IDS":
            return [["type": "QUEUE_ITEM_IDS", "requestId": rid, "itemIds": .array(queue.map { JSONValue($0.id) })]]
        default:
            return [["type": "INVALID_REQUEST", "requestId": rid, "reason": "INVALID_COMMAND"]]
        }
        return [mediaStatus(requestID: requestID)]
    }

    private func startMediaSession(items: [JSONValue], startIndex: Int, currentTime: Double) {
        mediaSessionID = nextMediaSessionID
        nextMediaSessionID += 1
        queue = items.map { item in
            defer { nextItemID += 1 }
            return (id: nextItemID, item: item)
        }
        currentItemID = queue[startIndex].id
        playerState = "PLAYING"
        idleReason = nil
        self.currentTime = currentTime
        playbackRate = 1
        activeTrackIDs = items[startIndex]["activeTrackIds"]?.arrayValue?.compactMap(\.intValue)
        textTrackStyle = nil
        repeatMode = "REPEAT_OFF"
    }

    /// A full MEDIA_STATUS: like devices, it lists only a window of the queue.
    private func mediaStatus(requestID: Int) -> JSONValue {
        guard let session = mediaSessionID else {
            return ["type": "MEDIA_STATUS", "requestId": JSONValue(requestID), "status": []]
        }
        var status: [String: JSONValue] = [
            "mediaSessionId": JSONValue(session), "playerState": .string(playerState),
            "currentTime": JSONValue(currentTime),
            "playbackRate": JSONValue(playbackRate), "supportedMediaCommands": 274447,
            "repeatMode": .string(repeatMode),
            "volume": ["level": 1, "muted": false],
        ]
        if let idleReason { status["idleReason"] = .string(idleReason) }
        if let activeTrackIDs { status["activeTrackIds"] = .array(activeTrackIDs.map { JSONValue($0) }) }
        if let index = queue.firstIndex(where: { $0.id == currentItemID }) {
            status["currentItemId"] = JSONValue(queue[index].id)
            if case .object(var media) = queue[index].item["media"] ?? .null {
                if let textTrackStyle { media["textTrackStyle"] = textTrackStyle }
                status["media"] = .object(media)
            }
            let window = queue[max(0, index - 1)..<min(queue.count, index + 2)]
            status["items"] = .array(
                window.map { entry in
                    ["itemId": JSONValue(entry.id), "media": ["contentId": entry.item["media"]?["contentId"] ?? .null]]
                })
        }
        return ["type": "MEDIA_STATUS", "requestId": JSONValue(requestID), "status": [.object(status)]]
    }
}
