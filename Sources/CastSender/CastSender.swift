public import CastModel
import JSONSupport
import Logging

/// Controls one Cast device: the platform (apps, device volume) and the media session of the
/// app it launches or joins. The equivalent of the Cast SDK's session manager and remote
/// media client, as a library.
///
/// Requests are numbered (positive, increasing, never 0) and their replies matched by
/// `requestId` alone, never by destination: devices address replies to `*` as often as to
/// the sender. Unsolicited broadcasts (requestId 0) and replies alike update one current
/// state, where partial MEDIA_STATUS updates are merged. Every request is validated before
/// it is sent and refused when the validator finds errors, unless forced. When the link
/// drops the sender reconnects with backoff and takes the running session back without
/// reloading it; a batch queue cast continues where it stopped.
///
/// ```swift
/// let sender = CastSender(endpoint: CastEndpoint(host: "192.168.1.20"), transportFactory: factory)
/// try await sender.connect()
/// try await sender.launch()                       // the Default Media Receiver
/// let status = try await sender.load(LoadRequest(media: media, activeTrackIDs: [1]))
/// try await sender.showCaptions(language: "fr")
/// for await event in await sender.events() { … }
/// ```
public actor CastSender {
    /// The platform endpoint of every device.
    public static let platformID = "receiver-0"

    /// The device this sender talks to.
    public let endpoint: CastEndpoint
    /// Timeouts, ids and the reconnect policy.
    public private(set) var configuration: CastSenderConfiguration
    let factory: any CastSenderTransportFactory

    /// An open transport and the number that tells its messages from those of older links.
    struct Link {
        let transport: any CastSenderTransport
        let generation: Int
    }

    struct PendingRequest {
        let messageType: String
        let context: CastErrorExplanation.Context
        let timeout: Duration
        /// For LAUNCH: the app it waits for. Some receivers announce the launched app only in a
        /// requestId-0 broadcast; that broadcast then answers the LAUNCH.
        var launching: StateCondition?
        var continuation: CheckedContinuation<DeviceReply, any Error>?
        /// A reply (or failure) that came before the caller started waiting.
        var early: Result<DeviceReply, any Error>?
        var timeoutTask: Task<Void, Never>?
    }

    /// Conditions a caller can wait for in the state.
    enum StateCondition {
        /// RECEIVER_STATUS lists the app with a transport id, in a session other than `replacing`.
        case appRunning(appID: String, replacing: String?)
    }

    struct StateWaiter {
        let condition: StateCondition
        let continuation: CheckedContinuation<Void, any Error>
        var timeoutTask: Task<Void, Never>?
    }

    var link: Link?
    var generation = 0
    var connection: CastConnectionState = .disconnected
    var receiver: ReceiverStatus?
    var session: CastSession?
    var media: MediaStatus?
    /// URLs of the media last loaded, for explaining failures that arrive unrequested.
    var mediaContext = CastErrorExplanation.Context()

    var lastRequestID = 0
    var pending: [Int: PendingRequest] = [:]
    var linkWaiters: [Int: CheckedContinuation<Link, any Error>] = [:]
    var stateWaiters: [Int: StateWaiter] = [:]
    var nextWaiterID = 0
    var listeners: [Int: AsyncStream<CastSenderEvent>.Continuation] = [:]
    var reconnectTask: Task<Void, Never>?
    var queueJob: QueueCastJob?
    var isRunningQueueJob = false

    var parser: JSONParser

    /// Validates requests before they are sent; loopback URLs pass for a device on this
    /// machine (an emulator), which does reach them.
    var requestValidator: CastValidator { CastValidator(loopbackIsReachable: endpoint.isLoopback) }

    /// Creates a sender; nothing happens on the network until ``connect()``.
    public init(
        endpoint: CastEndpoint, transportFactory: any CastSenderTransportFactory,
        configuration: CastSenderConfiguration = CastSenderConfiguration()
    ) {
        self.endpoint = endpoint
        self.factory = transportFactory
        self.configuration = configuration
        parser = Self.parser(for: configuration)
    }

    static func parser(for configuration: CastSenderConfiguration) -> JSONParser {
        JSONParser(
            limits: .init(
                maxDepth: 64, maxStringBytes: configuration.maximumIncomingPayloadBytes,
                maxDocumentBytes: configuration.maximumIncomingPayloadBytes))
    }

    /// Changes the configuration for what happens from now on (requests already waiting keep
    /// their timeout; a reconnect in progress keeps its policy).
    ///
    /// ```swift
    /// await sender.reconfigure { $0.requestTimeout = .seconds(30) }
    /// ```
    public func reconfigure(_ change: @Sendable (inout CastSenderConfiguration) -> Void) {
        change(&configuration)
        parser = Self.parser(for: configuration)
    }

    // MARK: - State and events

    /// What the sender knows now: connection, receiver status, session, merged media status.
    public var state: CastSenderState {
        CastSenderState(connection: connection, receiver: receiver, session: session, media: media)
    }

    /// The progress of the last batch queue cast, finished or not.
    public var queueCastProgress: QueueCastProgress? { queueJob?.progress }

    /// A new stream of events for one listener; it ends when the sender is closed.
    ///
    /// Each listener has its own buffer (``CastSenderConfiguration/eventBufferSize``); a
    /// listener that falls behind loses the oldest events, never blocks the sender.
    public func events() -> AsyncStream<CastSenderEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: CastSenderEvent.self, bufferingPolicy: .bufferingNewest(max(1, configuration.eventBufferSize)))
        if connection == .closed {
            continuation.finish()
            return stream
        }
        let id = nextWaiterID
        nextWaiterID += 1
        listeners[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeListener(id) }
        }
        return stream
    }

    func removeListener(_ id: Int) {
        listeners[id] = nil
    }

    func emit(_ event: CastSenderEvent) {
        for listener in listeners.values { listener.yield(event) }
    }

    func setConnection(_ newState: CastConnectionState) {
        // Closed is final: a connect or reconnect finishing after close() must not revive the sender.
        guard connection != newState, connection != .closed else { return }
        connection = newState
        Logger(.sender).debug("\(endpoint): \(newState)")
        emit(.connectionChanged(newState))
        switch newState {
        case .connected:
            guard let link else { return }
            let waiters = linkWaiters
            linkWaiters = [:]
            for waiter in waiters.values { waiter.resume(returning: link) }
        case .failed(let reason):
            failLinkWaiters(
                CastSenderError(
                    code: CastSenderError.Code.reconnectFailed, message: "the link to \(endpoint) is gone: \(reason)",
                    fix: "check the device is on and reachable (castprep devices), then connect again"))
        case .closed:
            failLinkWaiters(closedError())
        case .disconnected, .connecting, .reconnecting:
            break
        }
    }

    func failLinkWaiters(_ error: CastSenderError) {
        let waiters = linkWaiters
        linkWaiters = [:]
        for waiter in waiters.values { waiter.resume(throwing: error) }
    }

    func closedError() -> CastSenderError {
        CastSenderError(
            code: CastSenderError.Code.closed, message: "the sender for \(endpoint) was closed",
            fix: "create a new sender, or do not close it before the work is done")
    }

    // MARK: - Connecting

    /// Connects to the device (platform virtual connection and GET_STATUS) and returns its status.
    ///
    /// Calling it while connected returns the last status; while reconnecting it waits.
    @discardableResult
    public func connect() async throws -> ReceiverStatus {
        switch connection {
        case .connected:
            if let receiver { return receiver }
            return try await receiverStatus()
        case .connecting, .reconnecting:
            _ = try await waitForLink()
            if let receiver { return receiver }
            return try await receiverStatus()
        case .closed:
            throw closedError()
        case .disconnected, .failed:
            break
        }
        setConnection(.connecting)
        do {
            let link = try await openLink()
            // A sender connecting again after giving up takes its session back like a reconnect.
            try await resumeSession(via: link)
            guard connection != .closed else { throw closedError() }
            setConnection(.connected)
            return receiver ?? ReceiverStatus()
        } catch {
            await dropLink()
            let reason = (error as? CastSenderError)?.message ?? String(describing: error)
            setConnection(.failed(reason))
            if let error = error as? CastSenderError, error.code != CastSenderError.Code.sendFailed { throw error }
            // One message: the channel's reason already names the address when it says it
            // could not connect.
            throw CastSenderError(
                code: CastSenderError.Code.connectFailed,
                message: reason.hasPrefix("cannot connect") ? reason : "cannot connect to \(endpoint): \(reason)",
                fix:
                    "check that the device is on, on this network and reachable on port \(endpoint.port) (castprep devices lists the devices that answer)"
            )
        }
    }

    /// Closes the app's and the platform's virtual connections and the link. The app keeps
    /// running on the device; use ``stopApp()`` first to end it.
    public func close() async {
        guard connection != .closed else { return }
        reconnectTask?.cancel()
        reconnectTask = nil
        setConnection(.closed)
        if let link {
            if let session {
                try? await link.transport.closeVirtual(to: session.transportID, from: configuration.sourceID)
            }
            try? await link.transport.closeVirtual(to: Self.platformID, from: configuration.sourceID)
        }
        await dropLink()
        failAllPending(closedError())
        let waiters = stateWaiters
        stateWaiters = [:]
        for waiter in waiters.values {
            waiter.timeoutTask?.cancel()
            waiter.continuation.resume(throwing: closedError())
        }
        let streams = listeners
        listeners = [:]
        for listener in streams.values { listener.finish() }
    }

    /// Opens a transport, starts reading it and opens the platform virtual connection.
    func openLink() async throws -> Link {
        let transport: any CastSenderTransport
        do {
            transport = try await factory.makeTransport(to: endpoint)
        } catch let error as CastSenderError {
            throw error
        } catch {
            throw CastSenderError(
                code: CastSenderError.Code.sendFailed, message: "cannot open a link to \(endpoint)", causedBy: error)
        }
        if connection == .closed {
            await transport.close()
            throw closedError()
        }
        generation += 1
        let link = Link(transport: transport, generation: generation)
        self.link = link
        let stream = transport.incoming
        let linkGeneration = link.generation
        Task { [weak self] in
            do {
                for try await message in stream {
                    guard let sender = self else { return }
                    await sender.handle(message, generation: linkGeneration)
                }
                await self?.linkEnded(generation: linkGeneration, error: nil)
            } catch {
                await self?.linkEnded(generation: linkGeneration, error: error)
            }
        }
        do {
            try await transport.connectVirtual(to: Self.platformID, from: configuration.sourceID)
        } catch {
            throw CastSenderError(
                code: CastSenderError.Code.sendFailed, message: "CONNECT to \(Self.platformID) failed", causedBy: error)
        }
        return link
    }

    /// Forgets the current link and closes its transport.
    func dropLink() async {
        guard let old = link else { return }
        link = nil
        generation += 1
        await old.transport.close()
    }

    /// The incoming stream of link `generation` ended.
    func linkEnded(generation ended: Int, error: (any Error)?) {
        guard ended == generation, let dead = link else { return }
        link = nil
        generation += 1
        Task { await dead.transport.close() }
        if let permanent = error as? CastSenderError {
            // The transport found the peer is no Cast device: retrying cannot help.
            failAllPending(permanent)
            setConnection(.failed(permanent.message))
            return
        }
        let reason = error.map { String(describing: $0) } ?? "the device closed the connection"
        failAllPending(
            CastSenderError(
                code: CastSenderError.Code.connectionLost,
                message: "the link to \(endpoint) dropped (\(reason)) before the device answered",
                fix: "the sender reconnects by itself; repeat the command once it is connected again"))
        switch connection {
        case .connected:
            startReconnecting()
        case .connecting, .reconnecting, .disconnected, .failed, .closed:
            // A connect or reconnect in progress notices the failure through its own requests.
            break
        }
    }

    func startReconnecting() {
        if configuration.reconnect.maximumAttempts == 0 {
            setConnection(.failed("the link dropped and reconnecting is turned off"))
            return
        }
        setConnection(.reconnecting(attempt: 1))
        reconnectTask = Task { [weak self] in await self?.reconnectLoop() }
    }

    /// Retries with exponential backoff until the link is back and the session resumed, the
    /// policy gives up, or the sender is closed.
    func reconnectLoop() async {
        let policy = configuration.reconnect
        var attempt = 0
        var lastError = "no attempt made"
        while !Task.isCancelled, connection != .closed {
            attempt += 1
            if let limit = policy.maximumAttempts, attempt > limit {
                setConnection(.failed("\(limit) reconnect attempts failed; last: \(lastError)"))
                return
            }
            setConnection(.reconnecting(attempt: attempt))
            try? await Task.sleep(for: policy.delay(beforeAttempt: attempt))
            if Task.isCancelled || connection == .closed { return }
            do {
                let link = try await openLink()
                try await resumeSession(via: link)
                if Task.isCancelled || connection == .closed {
                    await dropLink()
                    return
                }
                reconnectTask = nil
                setConnection(.connected)
                if let session { emit(.sessionResumed(session)) }
                return
            } catch {
                lastError = (error as? CastSenderError)?.message ?? String(describing: error)
                await dropLink()
            }
        }
    }

    /// Takes the running session back after a reconnect: platform status, CONNECT to the
    /// app's transport id, media GET_STATUS. No LOAD: the device kept playing.
    func resumeSession(via link: Link) async throws {
        let status = try await fetchReceiverStatus(via: link)
        guard let previous = session else { return }
        let apps = status.applications ?? []
        let app =
            apps.first { $0.sessionID != nil && $0.sessionID == previous.sessionID }
            ?? apps.first { $0.transportID == previous.transportID }
        guard let app, let resumed = CastSession(application: app) else {
            endSession()
            return
        }
        try await link.transport.connectVirtual(to: resumed.transportID, from: configuration.sourceID)
        session = resumed
        _ = try await send(MediaGetStatusRequest(), to: resumed.transportID, via: link)
    }

    /// Waits until the link is usable (after a connect or reconnect in progress).
    func waitForLink() async throws -> Link {
        switch connection {
        case .connected:
            if let link { return link }
        case .closed:
            throw closedError()
        case .disconnected:
            throw notConnectedError()
        case .failed(let reason):
            throw CastSenderError(
                code: CastSenderError.Code.reconnectFailed, message: "the link to \(endpoint) is gone: \(reason)",
                fix: "call connect() again")
        case .connecting, .reconnecting:
            break
        }
        let id = nextWaiterID
        nextWaiterID += 1
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                linkWaiters[id] = continuation
            }
        } onCancel: {
            Task { [weak self] in await self?.cancelLinkWaiter(id) }
        }
    }

    func cancelLinkWaiter(_ id: Int) {
        linkWaiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    func notConnectedError() -> CastSenderError {
        CastSenderError(
            code: CastSenderError.Code.notConnected, message: "the sender is not connected to \(endpoint)",
            fix: "call connect() first")
    }

    /// The link requests go out on: the current one, or the one a reconnect brings back.
    func usableLink() async throws -> Link {
        if connection == .connected, let link { return link }
        return try await waitForLink()
    }

    // MARK: - Requests and replies

    /// Gives the next request id: positive, increasing, never 0 (0 marks broadcasts).
    ///
    /// The counter is not reset on reconnect, so a late reply from an old link can never match
    /// a new request.
    func allocateRequestID() -> Int {
        lastRequestID = lastRequestID >= Int(Int32.max) ? 1 : lastRequestID + 1
        return lastRequestID
    }

    /// Sends `request` with a fresh requestId and waits for the message carrying that id.
    ///
    /// Error replies (LOAD_FAILED, INVALID_REQUEST, LAUNCH_ERROR…) are thrown with their
    /// explanation; no reply in `timeout` throws `sender.timeout`.
    func send<R: CastRequest>(
        _ request: R, to destination: String, timeout: Duration? = nil,
        context: CastErrorExplanation.Context = CastErrorExplanation.Context(), via explicitLink: Link? = nil,
        launching: StateCondition? = nil
    ) async throws -> DeviceReply {
        let link: Link
        if let explicitLink { link = explicitLink } else { link = try await usableLink() }
        var request = request
        let id = allocateRequestID()
        request.requestID = id
        let message = SenderMessage(
            sourceID: configuration.sourceID, destinationID: destination, namespace: R.namespace,
            payload: JSONWriter.compact.string(from: request.jsonValue))
        let limit = timeout ?? configuration.requestTimeout
        pending[id] = PendingRequest(messageType: R.messageType, context: context, timeout: limit, launching: launching)
        pending[id]?.timeoutTask = Task { [weak self] in
            try? await Task.sleep(for: limit)
            guard !Task.isCancelled else { return }
            await self?.expire(id)
        }
        Logger(.channel).trace("\(endpoint) → \(destination) \(R.namespace.rawValue): \(message.payload)")
        Logger(.sender).debug("\(endpoint): \(R.messageType) (requestId \(id)) to \(destination)")
        do {
            try await link.transport.send(message)
        } catch {
            pending.removeValue(forKey: id)?.timeoutTask?.cancel()
            // A link that cannot send is dead even if its stream has not ended yet.
            linkEnded(generation: link.generation, error: error)
            var failure = CastSenderError(
                code: CastSenderError.Code.sendFailed, message: "could not send \(R.messageType) to \(destination)",
                causedBy: error)
            failure.fix = "the link is probably down; the sender reconnects by itself"
            throw failure
        }
        return try await awaitReply(id)
    }

    func awaitReply(_ id: Int) async throws -> DeviceReply {
        guard let entry = pending[id] else { throw CancellationError() }
        if let early = entry.early {
            pending[id] = nil
            return try early.get()
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                pending[id]?.continuation = continuation
            }
        } onCancel: {
            Task { [weak self] in await self?.resolve(id, with: .failure(CancellationError())) }
        }
    }

    func resolve(_ id: Int, with result: Result<DeviceReply, any Error>) {
        guard var entry = pending[id] else { return }
        entry.timeoutTask?.cancel()
        if let continuation = entry.continuation {
            pending[id] = nil
            continuation.resume(with: result)
        } else if entry.early == nil {
            entry.early = result
            entry.timeoutTask = nil
            pending[id] = entry
        }
    }

    func expire(_ id: Int) {
        guard let entry = pending[id] else { return }
        resolve(
            id,
            with: .failure(
                CastSenderError(
                    code: CastSenderError.Code.timeout,
                    message:
                        "no reply to \(entry.messageType) (requestId \(id)) from \(endpoint) within \(entry.timeout.shortDescription)",
                    fix:
                        "check the device is on and reachable (castprep status); a slow network or device may need a longer timeout"
                )))
    }

    func failAllPending(_ error: CastSenderError) {
        for id in pending.keys.sorted() { resolve(id, with: .failure(error)) }
    }

    // MARK: - Incoming messages

    /// Handles one message from link `generation`: state first, then the waiting request.
    func handle(_ message: SenderMessage, generation messageGeneration: Int) {
        guard messageGeneration == generation else { return }
        Logger(.channel).trace("\(endpoint) ← \(message.sourceID) \(message.namespace.rawValue): \(message.payload)")
        guard message.payload.utf8.count <= configuration.maximumIncomingPayloadBytes else {
            emit(
                .ignoredMessage(
                    "a \(message.payload.utf8.count)-byte message on \(message.namespace) is over the \(configuration.maximumIncomingPayloadBytes)-byte limit"
                ))
            return
        }
        guard let json = try? parser.parse(message.payload).value, case .object = json else {
            emit(.ignoredMessage("a message on \(message.namespace) from \(message.sourceID) is not a JSON object"))
            return
        }
        let type = json["type"]?.stringValue ?? json["responseType"]?.stringValue
        switch message.namespace {
        case .connection:
            if type == "CLOSE" { handleClose(from: message.sourceID) }
            return
        case .heartbeat:
            return
        case .receiver:
            handleReceiverMessage(type: type, json: json)
        case .media:
            handleMediaMessage(type: type, json: json)
        default:
            break
        }
        let isError = type.map(CastErrorExplanation.errorMessageTypes.contains) ?? false
        // Chromium also accepts launchRequestId on LAUNCH replies.
        let requestID = json["requestId"]?.intValue ?? json["launchRequestId"]?.intValue ?? 0
        let entry = requestID > 0 ? pending[requestID] : nil
        if isError {
            let explanation = CastErrorExplanation(reply: json, context: entry?.context ?? mediaContext)
            emit(.deviceError(explanation))
            if entry != nil {
                resolve(
                    requestID, with: .failure(deviceError(explanation, messageType: entry?.messageType ?? "request")))
            }
            return
        }
        if type == "LAUNCH_STATUS" { return }  // interim; the LAUNCH reply follows
        if entry != nil {
            resolve(
                requestID,
                with: .success(
                    DeviceReply(type: type, json: json, sourceID: message.sourceID, namespace: message.namespace)))
        }
    }

    func deviceError(_ explanation: CastErrorExplanation, messageType: String) -> CastSenderError {
        CastSenderError(
            code: explanation.code,
            message: "the device refused \(messageType): \(explanation.heading): \(explanation.title)",
            fix: explanation.command.map { "run \($0)" }, explanation: explanation)
    }

    func handleClose(from source: String) {
        if let session, source == session.transportID {
            // The app went away (stopped by another sender, crashed, or replaced).
            endSession()
        }
    }

    func handleReceiverMessage(type: String?, json: JSONValue) {
        switch type {
        case "RECEIVER_STATUS":
            var diagnostics: [Diagnostic] = []
            guard let message = ReceiverStatusMessage.decode(from: json, at: .root, diagnostics: &diagnostics),
                let status = message.status
            else { return }
            receiver = status
            emit(.receiverStatusChanged(status))
            if let current = session {
                let apps = status.applications ?? []
                if let app = apps.first(where: { $0.transportID == current.transportID }),
                    let refreshed = CastSession(application: app)
                {
                    if refreshed != current {
                        session = refreshed
                        emit(.sessionChanged(refreshed))
                    }
                } else {
                    endSession()
                }
            }
            checkStateWaiters()
            let reply = DeviceReply(type: type, json: json, sourceID: Self.platformID, namespace: .receiver)
            for (id, entry) in pending where entry.launching.map(holds) == true {
                resolve(id, with: .success(reply))
            }
        case "LAUNCH_STATUS":
            if let status = json["status"]?.stringValue { emit(.launchStatus(status)) }
        default:
            break
        }
    }

    func handleMediaMessage(type: String?, json: JSONValue) {
        switch type {
        case "MEDIA_STATUS":
            // A status that is not a list would read as "no session"; drop it instead.
            var diagnostics: [Diagnostic] = []
            guard case .array = json["status"],
                let message = MediaStatusMessage.decode(from: json, at: .root, diagnostics: &diagnostics)
            else {
                emit(.ignoredMessage("a MEDIA_STATUS without a status list"))
                return
            }
            apply(message.status)
        case "QUEUE_CHANGE":
            let change = CastQueueChange(
                changeType: json["changeType"]?.stringValue,
                itemIDs: json["itemIds"]?.arrayValue?.compactMap(\.intValue) ?? [],
                insertBefore: json["insertBefore"]?.intValue)
            emit(.queueChangeNotice(change))
        default:
            break
        }
    }

    /// Merges MEDIA_STATUS entries into the current state; `[]` means no media session.
    func apply(_ statuses: [MediaStatus]) {
        let before = media
        if statuses.isEmpty {
            media = nil
        }
        for status in statuses {
            if let id = status.mediaSessionID, id != media?.mediaSessionID {
                media = status  // a new media session: nothing of the old one carries over
            } else {
                media = (media ?? MediaStatus()).merging(status)
            }
        }
        guard media != before else { return }
        emit(.mediaStatusChanged(media))
        let queue = CastQueueState(status: media)
        if queue != CastQueueState(status: before), let queue { emit(.queueChanged(queue)) }
    }

    func endSession() {
        guard session != nil else { return }
        session = nil
        emit(.sessionChanged(nil))
        if media != nil {
            media = nil
            emit(.mediaStatusChanged(nil))
        }
    }

    // MARK: - Waiting for state

    /// Waits until `condition` holds in the current state, or throws after `timeout`.
    func waitUntil(_ condition: StateCondition, timeout: Duration) async throws {
        if holds(condition) { return }
        let id = nextWaiterID
        nextWaiterID += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                var waiter = StateWaiter(condition: condition, continuation: continuation)
                waiter.timeoutTask = Task { [weak self] in
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return }
                    await self?.expireStateWaiter(id, timeout: timeout)
                }
                stateWaiters[id] = waiter
            }
        } onCancel: {
            Task { [weak self] in await self?.cancelStateWaiter(id) }
        }
    }

    func holds(_ condition: StateCondition) -> Bool {
        switch condition {
        case .appRunning(let appID, let replacing):
            guard let app = runningApp(matching: appID) else { return false }
            return replacing == nil || app.sessionID != replacing
        }
    }

    func checkStateWaiters() {
        for (id, waiter) in stateWaiters where holds(waiter.condition) {
            stateWaiters[id] = nil
            waiter.timeoutTask?.cancel()
            waiter.continuation.resume()
        }
    }

    func expireStateWaiter(_ id: Int, timeout: Duration) {
        guard let waiter = stateWaiters.removeValue(forKey: id) else { return }
        let what =
            switch waiter.condition {
            case .appRunning(let appID, _): "app \(appID) to appear in RECEIVER_STATUS"
            }
        waiter.continuation.resume(
            throwing: CastSenderError(
                code: CastSenderError.Code.timeout, message: "waited \(timeout.shortDescription) for \(what)",
                fix: "the device may be slow to start the app; try again, or raise launchTimeout"))
    }

    func cancelStateWaiter(_ id: Int) {
        guard let waiter = stateWaiters.removeValue(forKey: id) else { return }
        waiter.timeoutTask?.cancel()
        waiter.continuation.resume(throwing: CancellationError())
    }

    /// The running app whose id (or universal id) is `appID` and that has a transport id.
    func runningApp(matching appID: String) -> ReceiverApplication? {
        receiver?.applications?.first { app in
            (app.appID == appID || app.universalAppID == appID) && !(app.transportID ?? "").isEmpty
        }
    }

    // MARK: - Validation gate

    /// Reports findings and refuses a request with errors unless `force` is set.
    func gate(_ findings: [Diagnostic], messageType: String, force: Bool) throws {
        guard !findings.isEmpty else { return }
        emit(.validationFindings(messageType: messageType, findings))
        guard findings.containsErrors, !force else { return }
        let errors = findings.filter { $0.severity == .error }
        let first = errors[0]
        throw CastSenderError(
            code: CastSenderError.Code.requestInvalid,
            message:
                "\(messageType) not sent: \(errors.count) error\(errors.count == 1 ? "" : "s"), first [\(first.code.rawValue)] \(first.message)",
            fix: first.fix.map { "\($0); or force sending it" } ?? "fix the request, or force sending it",
            diagnostics: findings)
    }
}
