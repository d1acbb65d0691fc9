public import CastModel
public import JSONSupport

/// The emulated Cast device's brain: platform (receiver namespace) and Default Media Receiver
/// semantics, with a simulated playback clock, and no I/O at all.
///
/// ## Why a value type driven by one owner
/// Every input — a CONNECT, a message, the passing of time, the answer to a media fetch — is a
/// synchronous `mutating` call that returns what the device wants done (``ReceiverOutput``).
/// Nothing inside suspends, so no other input can slip in halfway through a LOAD, which is
/// exactly the bug an actor with `await` inside its handlers invites (actor reentrancy). The
/// one slow thing a device does, fetching media, is an output (``ReceiverOutput/fetchMedia(_:)``)
/// whose answer comes back later through ``completeFetch(_:outcome:)``; meanwhile the device
/// reports IDLE + `extendedStatus` LOADING like a real one, and a newer LOAD simply makes the
/// old ticket stale. Time is an input too (``advance(to:)``), so a test can play an hour of
/// media, a queue with every repeat mode, or a preload, in microseconds and identically on
/// every run. ``ReceiverHost`` is the production owner: an actor that serialises the calls,
/// reads the clock, runs the fetches and hands the outputs to the transport.
///
/// ## Conventions
/// - Call ``advance(to:)`` before an input to say what time it is; inputs happen at ``now``.
/// - A request gets its reply (same `requestId`) on the requesting connection; every change
///   is also broadcast with `requestId` 0 to every socket connected to the endpoint, the
///   requester included (a real device does both; senders match on `requestId`).
/// - A broadcast goes once per socket, with destination `*`, however many virtual
///   connections that socket has to the endpoint.
public struct ReceiverDevice: Sendable {
    /// What the device is configured to be.
    public let configuration: ReceiverConfiguration
    /// The faults currently scripted; change them with ``setFaults(_:)``.
    public internal(set) var faults: ReceiverFaults
    /// Device time: the last time given to ``advance(to:)``.
    public internal(set) var now: Duration = .zero
    /// Virtual connections the device accepted.
    public internal(set) var connections: Set<VirtualConnection> = []
    /// The device volume.
    public internal(set) var volume: CastVolume
    /// The running app, if any.
    public internal(set) var runningApp: RunningApp?

    var media: MediaSession?
    var random: DeviceRandom
    var nextTicket = 1
    var nextMediaSessionID = 1
    var messageCounts: [SenderID: Int] = [:]
    var silencedSenders: Set<SenderID> = []
    var delayed: [(due: Duration, message: OutgoingMessage)] = []
    var outputs: [ReceiverOutput] = []
    var logEntries: [ReceiverLogEntry] = []
    let validator = CastValidator()

    /// An app the device is running.
    public struct RunningApp: Sendable, Hashable {
        public var app: InstalledApp
        /// The session id; the same GUID is the app's transport id (what current devices do).
        public var sessionID: String
        public var transportID: String { sessionID }
        /// `WEB`, or `ANDROID_TV` when a Cast Connect LAUNCH picked the Android TV version.
        public var appType: ReceiverAppType
        /// What the LAUNCH asked for, recorded for tests and the log.
        public var supportedAppTypes: [ReceiverAppType]?
        /// The LAUNCH's `credentialsData`; a real device hands it to the Android TV app only.
        public var credentialsData: CredentialsData?
        public var language: String?
        public var appParams: JSONValue?
    }

    /// Creates a device with no app running and nobody connected.
    public init(
        configuration: ReceiverConfiguration = ReceiverConfiguration(), faults: ReceiverFaults = ReceiverFaults()
    ) {
        self.configuration = configuration
        self.faults = faults
        self.volume = configuration.volume
        self.random = DeviceRandom(seed: configuration.seed)
    }

    // MARK: - Inputs

    /// A sender opened a virtual connection (CONNECT from `source` to `destination`).
    ///
    /// A CONNECT to `receiver-0` or to the running app's transport id is accepted; any other
    /// destination is refused with a CLOSE, as devices do for a transport id that is not
    /// running.
    public mutating func connect(sender: SenderID, source: String, destination: String) -> [ReceiverOutput] {
        record(
            .init(
                direction: .event, time: now, sender: sender, sourceID: source, destinationID: destination,
                namespace: CastNamespace.connection.rawValue, note: "CONNECT"))
        acceptConnection(sender: sender, source: source, destination: destination)
        return takeOutputs()
    }

    /// A sender closed a virtual connection (CLOSE from `source` to `destination`).
    public mutating func close(sender: SenderID, source: String, destination: String) -> [ReceiverOutput] {
        record(
            .init(
                direction: .event, time: now, sender: sender, sourceID: source, destinationID: destination,
                namespace: CastNamespace.connection.rawValue, note: "CLOSE"))
        connections.remove(VirtualConnection(sender: sender, remoteID: source, localID: destination))
        return takeOutputs()
    }

    /// A sender's socket is gone (closed, failed, or its heartbeat timed out).
    ///
    /// Its connections are forgotten; the app and the media keep playing, as the Default
    /// Media Receiver does when the phone that started it leaves.
    public mutating func senderDisconnected(_ sender: SenderID) -> [ReceiverOutput] {
        record(.init(direction: .event, time: now, sender: sender, note: "socket closed"))
        forget(sender)
        return takeOutputs()
    }

    /// A message arrived from `sender`'s endpoint `source` for the device endpoint `destination`.
    ///
    /// Connection and heartbeat messages are normally handled by the transport; if it passes
    /// them on, CONNECT/CLOSE are treated like ``connect(sender:source:destination:)`` /
    /// ``close(sender:source:destination:)`` and PING gets a PONG (unless pongs are stopped).
    public mutating func receive(
        sender: SenderID, source: String, destination: String, namespace: CastNamespace, payload: String
    ) -> [ReceiverOutput] {
        // Frames over 64 KiB never reach a device's handlers; they are not even parsed here.
        let body = CastFrame.bodySize(
            payloadSize: payload.utf8.count, namespace: namespace, sourceID: source, destinationID: destination)
        guard body <= CastFrame.maximumBodySize else {
            record(
                .init(
                    direction: .incoming, time: now, sender: sender, sourceID: source, destinationID: destination,
                    namespace: namespace.rawValue, payload: .string(String(payload.prefix(200)) + "…")))
            note(
                "dropped: the message is \(body) bytes; devices refuse frames over \(CastFrame.maximumBodySize) bytes",
                sender: sender)
            return takeOutputs()
        }
        let parsed = try? JSONParser(limits: .init(maxDepth: 64, maxStringBytes: 65_536, maxDocumentBytes: 65_536))
            .parse(payload).value
        record(
            .init(
                direction: .incoming, time: now, sender: sender, sourceID: source, destinationID: destination,
                namespace: namespace.rawValue, payload: parsed ?? .string(payload)))
        let type = parsed?["type"]?.stringValue
        switch namespace {
        case .connection:
            if type == "CONNECT" {
                acceptConnection(sender: sender, source: source, destination: destination)
            } else if type == "CLOSE" {
                connections.remove(VirtualConnection(sender: sender, remoteID: source, localID: destination))
            }
            return takeOutputs()
        case .heartbeat:
            if type == "PING", !silencedSenders.contains(sender) {
                emit(
                    OutgoingMessage(
                        sender: sender, sourceID: destination, destinationID: source, namespace: .heartbeat,
                        payload: ["type": "PONG"]))
            }
            return takeOutputs()
        default:
            break
        }
        let connection = VirtualConnection(sender: sender, remoteID: source, localID: destination)
        guard connections.contains(connection) else {
            note("dropped: \(source) never sent CONNECT to \(destination) on this socket", sender: sender)
            return takeOutputs()
        }
        guard let parsed, case .object = parsed else {
            note("dropped: the payload is not a JSON object", sender: sender)
            return takeOutputs()
        }
        if destination == CastEndpoint.platform, namespace == .receiver {
            handlePlatform(parsed, from: connection)
        } else if let app = runningApp, destination == app.transportID {
            if namespace == .media, app.app.playsMedia {
                handleMedia(parsed, from: connection)
            } else {
                note(
                    "ignored: \(app.app.displayName) does not handle \(namespace.rawValue) in this emulator",
                    sender: sender)
            }
        } else {
            note("ignored: nothing at \(destination) handles \(namespace.rawValue)", sender: sender)
        }
        countMessage(from: sender)
        return takeOutputs()
    }

    /// Moves device time forward to `time`, firing everything due on the way, in order: held
    /// replies, the end of buffering, preloads, and the end of each item (which may start the
    /// next one). A time in the past is ignored: device time never goes back.
    public mutating func advance(to time: Duration) -> [ReceiverOutput] {
        guard time >= now else { return takeOutputs() }
        // A bound on events per call, so a queue of zero-length items under REPEAT_ALL cannot
        // spin forever inside one call.
        var budget = 10_000
        while budget > 0, let due = nextDeadline, due <= time {
            budget -= 1
            now = max(now, due)
            fireDueEvents()
        }
        now = time
        return takeOutputs()
    }

    /// The answer to a ``ReceiverOutput/fetchMedia(_:)`` request. An answer for a load the
    /// device no longer waits for (replaced by a newer LOAD, stopped) is ignored.
    public mutating func completeFetch(_ request: MediaFetchRequest, outcome: MediaFetchOutcome) -> [ReceiverOutput] {
        fetchCompleted(ticket: request.ticket, outcome: outcome)
        return takeOutputs()
    }

    /// Replaces the scripted faults. Stopping pongs takes effect at once for connected sockets.
    public mutating func setFaults(_ newFaults: ReceiverFaults) -> [ReceiverOutput] {
        faults = newFaults
        record(.init(direction: .event, time: now, note: newFaults.isEmpty ? "faults cleared" : "faults set"))
        if newFaults.stopAnsweringPings {
            for sender in Set(connections.map(\.sender)).sorted() where !silencedSenders.contains(sender) {
                silencedSenders.insert(sender)
                outputs.append(.stopAnsweringPings(sender))
            }
        }
        return takeOutputs()
    }

    /// The earliest time at which something will happen without any input, if anything will.
    /// A host sleeps until then and calls ``advance(to:)``.
    public var nextDeadline: Duration? {
        var deadlines = delayed.map(\.due)
        if let deadline = media?.nextDeadline { deadlines.append(deadline) }
        return deadlines.min()
    }

    /// The log entries recorded since the last call (messages in and out, events), oldest first.
    public mutating func takeLog() -> [ReceiverLogEntry] {
        defer { logEntries.removeAll() }
        return logEntries
    }

    // MARK: - State for inspection

    /// What a RECEIVER_STATUS would say now.
    public var receiverStatus: ReceiverStatus {
        var status = ReceiverStatus(isActiveInput: true, isStandBy: false, volume: volume)
        status.userEq = .object([:])
        if let runningApp {
            var application = ReceiverApplication(
                appID: runningApp.app.appID, displayName: runningApp.app.displayName,
                namespaces: runningApp.app.namespaces.map(\.rawValue), sessionID: runningApp.sessionID,
                transportID: runningApp.transportID)
            application.appType = runningApp.appType.rawValue
            application.iconURL = ""
            application.isIdleScreen = !runningApp.app.playsMedia && runningApp.app.appID == InstalledApp.backdrop.appID
            application.launchedFromCloud = false
            application.statusText = runningApp.app.displayName
            application.universalAppID = runningApp.app.appID
            status.applications = [application]
        }
        return status
    }

    /// What a MEDIA_STATUS would say now: one status, or none when no media session exists.
    public var mediaStatus: MediaStatus? { media.map { $0.status(at: now) } }

    // MARK: - Connections

    mutating func acceptConnection(sender: SenderID, source: String, destination: String) {
        let isKnown = destination == CastEndpoint.platform || destination == runningApp?.transportID
        guard isKnown else {
            note("refused CONNECT to \(destination): no such endpoint", sender: sender)
            outputs.append(.closeVirtualConnection(sender: sender, localID: destination, remoteID: source))
            return
        }
        let isNewSocket = !connections.contains { $0.sender == sender }
        connections.insert(VirtualConnection(sender: sender, remoteID: source, localID: destination))
        if isNewSocket, faults.stopAnsweringPings, !silencedSenders.contains(sender) {
            silencedSenders.insert(sender)
            outputs.append(.stopAnsweringPings(sender))
        }
    }

    mutating func forget(_ sender: SenderID) {
        connections = connections.filter { $0.sender != sender }
        messageCounts[sender] = nil
        silencedSenders.remove(sender)
        delayed.removeAll { $0.message.sender == sender }
    }

    /// Counts a handled message for the drop-connection fault and drops the socket when due.
    mutating func countMessage(from sender: SenderID) {
        guard let limit = faults.dropConnectionAfterMessages,
            faults.dropConnectionSender == nil || faults.dropConnectionSender == sender
        else { return }
        let count = messageCounts[sender, default: 0] + 1
        messageCounts[sender] = count
        guard count >= limit else { return }
        record(
            .init(
                direction: .event, time: now, sender: sender,
                note: "fault: dropping the connection after \(count) messages"))
        outputs.append(.dropConnection(sender))
        forget(sender)
    }

    // MARK: - Sending

    /// Sends `payload` from the connection's device endpoint back to the requester.
    ///
    /// Replies are held when the reply-delay fault is set; they are delivered by
    /// ``advance(to:)``, to the connection as it exists then.
    mutating func reply(_ payload: JSONValue, on connection: VirtualConnection, namespace: CastNamespace) {
        guard connections.contains(connection) else {
            note("not sent: the reply's connection \(connection) is gone", sender: connection.sender)
            return
        }
        let message = OutgoingMessage(
            sender: connection.sender, sourceID: connection.localID, destinationID: connection.remoteID,
            namespace: namespace, payload: payload)
        if let delay = faults.replyDelay, delay > .zero, (payload["requestId"]?.intValue ?? 0) != 0 {
            guard delayed.count < Self.maximumHeldReplies else {
                note(
                    "not sent: \(Self.maximumHeldReplies) replies are already held by the delay fault",
                    sender: connection.sender)
                return
            }
            delayed.append((now + delay, message))
            return
        }
        emit(message)
    }

    /// A bound on replies held by the delay fault, so a sender that keeps asking cannot grow
    /// the device without limit.
    static let maximumHeldReplies = 10_000

    /// Sends `payload` once to every socket connected to `localID`, addressed to `*`.
    mutating func broadcast(_ payload: JSONValue, from localID: String, namespace: CastNamespace) {
        let sockets = Set(connections.filter { $0.localID == localID }.map(\.sender)).sorted()
        for sender in sockets {
            emit(
                OutgoingMessage(
                    sender: sender, sourceID: localID, destinationID: CastEndpoint.broadcast,
                    namespace: namespace, payload: payload))
        }
    }

    /// Appends a message to the outputs and the log, unless it cannot go out.
    mutating func emit(_ message: OutgoingMessage) {
        let body = CastFrame.bodySize(
            payloadSize: message.payloadText.utf8.count, namespace: message.namespace,
            sourceID: message.sourceID, destinationID: message.destinationID)
        if body > CastFrame.maximumBodySize {
            note(
                "not sent: a \(message.type ?? "message") of \(body) bytes does not fit in one frame",
                sender: message.sender)
            return
        }
        record(
            .init(
                direction: .outgoing, time: now, sender: message.sender, sourceID: message.sourceID,
                destinationID: message.destinationID, namespace: message.namespace.rawValue, payload: message.payload))
        outputs.append(.message(message))
    }

    mutating func releaseDueReplies() {
        let due = delayed.filter { $0.due <= now }
        delayed.removeAll { $0.due <= now }
        for (_, message) in due {
            let stillConnected = connections.contains {
                $0.sender == message.sender && $0.remoteID == message.destinationID && $0.localID == message.sourceID
            }
            if stillConnected {
                emit(message)
            } else {
                note("not sent: the held \(message.type ?? "reply") has no connection left", sender: message.sender)
            }
        }
    }

    mutating func record(_ entry: ReceiverLogEntry) { logEntries.append(entry) }

    mutating func note(_ text: String, sender: SenderID? = nil, diagnostics: [Diagnostic] = []) {
        record(.init(direction: .event, time: now, sender: sender, note: text, diagnostics: diagnostics))
    }

    mutating func takeOutputs() -> [ReceiverOutput] {
        defer { outputs.removeAll() }
        return outputs
    }

    mutating func makeTicket() -> Int {
        defer { nextTicket += 1 }
        return nextTicket
    }

    // MARK: - Timers

    mutating func fireDueEvents() {
        if delayed.contains(where: { $0.due <= now }) { releaseDueReplies() }
        guard let deadline = media?.nextDeadline, deadline <= now else { return }
        mediaTimerFired()
    }
}

/// The `requestId` of a request payload: an integer, `3.0` tolerated; 0 when absent.
func requestID(of payload: JSONValue) -> Int { payload["requestId"]?.intValue ?? 0 }
