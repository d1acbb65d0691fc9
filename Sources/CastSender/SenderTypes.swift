public import CastModel
import JSONSupport

// MARK: - Errors

/// Why a sender operation failed, with a stable code and what to do about it.
///
/// Device errors carry an ``explanation``; a request the validator rejected carries the
/// ``diagnostics`` that explain why it was not sent.
public struct CastSenderError: CodedError, Hashable {
    /// Stable: `sender.timeout`, `sender.request-invalid`, `device.load-failed`, …
    public var code: DiagnosticCode
    /// What went wrong, with the request and endpoint named.
    public var message: String
    /// What to do next.
    public var fix: String?
    /// The device's error in words, when the device sent one.
    public var explanation: CastErrorExplanation?
    /// The validator's findings, when the request was refused before sending.
    public var diagnostics: [Diagnostic]
    /// The lower layer's error (a ``ChannelError``…) this one wraps.
    public var underlying: ErrorCause?

    public var cause: (any CodedError)? { underlying?.error }

    /// Creates an error.
    public init(
        code: DiagnosticCode, message: String, fix: String? = nil, explanation: CastErrorExplanation? = nil,
        diagnostics: [Diagnostic] = []
    ) {
        self.code = code
        self.message = message
        self.fix = fix
        self.explanation = explanation
        self.diagnostics = diagnostics
    }

    /// Creates an error caused by `error`: a coded error becomes the ``cause`` (rendered once,
    /// with its fix when this error has none); any other error's text is appended to `message`.
    public init(code: DiagnosticCode, message: String, causedBy error: any Error) {
        if let coded = error as? any CodedError {
            self.init(code: code, message: message)
            underlying = ErrorCause(coded)
        } else {
            self.init(code: code, message: "\(message): \(error)")
        }
    }

    /// The message with the likely cause, the command that diagnoses it and the fix, each said
    /// once (a fix that only repeats the diagnosing command is left out), without the findings.
    public var summary: String {
        let rendering = ErrorRenderer.render(self)
        var text = "[\(code.rawValue)] \(rendering.message)"
        var command: String?
        if let explanation {
            text += "\n    likely cause: \(explanation.likelyCause)"
            command = explanation.command
            if let command { text += "\n    diagnose: \(command)" }
        }
        if let fix = rendering.fix, fix != command.map({ "run \($0)" }) { text += "\n    fix: \(fix)" }
        return text
    }

    /// The stable codes of errors the sender raises itself.
    public enum Code {
        /// `connect()` has not been called, or the sender was closed.
        public static let notConnected: DiagnosticCode = "sender.not-connected"
        /// The first connection to the device failed.
        public static let connectFailed: DiagnosticCode = "sender.connect-failed"
        /// The link dropped while a request waited for its reply.
        public static let connectionLost: DiagnosticCode = "sender.connection-lost"
        /// Every reconnect attempt failed.
        public static let reconnectFailed: DiagnosticCode = "sender.reconnect-failed"
        /// ``CastSender/close()`` was called.
        public static let closed: DiagnosticCode = "sender.closed"
        /// No reply with the request's requestId arrived in time.
        public static let timeout: DiagnosticCode = "sender.timeout"
        /// The validator found errors; nothing was sent.
        public static let requestInvalid: DiagnosticCode = "sender.request-invalid"
        /// No receiver app session: launch or join one first.
        public static let noSession: DiagnosticCode = "sender.no-session"
        /// No media session: load something first.
        public static let noMediaSession: DiagnosticCode = "sender.no-media-session"
        /// `join()` found no app to join.
        public static let appNotRunning: DiagnosticCode = "sender.app-not-running"
        /// No text track has the requested language.
        public static let trackNotFound: DiagnosticCode = "sender.track-not-found"
        /// The queue cannot be split into frames (empty, or one item larger than a frame).
        public static let queuePlan: DiagnosticCode = "sender.queue-plan"
        /// The device lost the queue a batch cast was building (the app or media session changed).
        public static let queueLost: DiagnosticCode = "sender.queue-lost"
        /// The transport refused to send.
        public static let sendFailed: DiagnosticCode = "sender.send-failed"
        /// The device answered with something the sender cannot use.
        public static let unexpectedReply: DiagnosticCode = "sender.unexpected-reply"
        /// Another operation of the same kind is running.
        public static let busy: DiagnosticCode = "sender.busy"
    }
}

// MARK: - Configuration

/// When and how often the sender tries to get a lost link back.
///
/// Delays grow exponentially from ``initialDelay`` by ``multiplier`` up to ``maximumDelay``.
/// There is no jitter: a sender talks to one device, so there is no herd to spread out.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The wait before the first attempt.
    public var initialDelay: Duration
    /// How much each wait grows (2 doubles it).
    public var multiplier: Double
    /// The longest wait between attempts.
    public var maximumDelay: Duration
    /// How many attempts before giving up; nil tries forever, 0 never reconnects.
    public var maximumAttempts: Int?

    /// Creates a policy. The default waits 0.5, 1, 2, 4 … up to 30 s, ten times (about 3 minutes).
    public init(
        initialDelay: Duration = .milliseconds(500), multiplier: Double = 2, maximumDelay: Duration = .seconds(30),
        maximumAttempts: Int? = 10
    ) {
        self.initialDelay = initialDelay
        self.multiplier = multiplier
        self.maximumDelay = maximumDelay
        self.maximumAttempts = maximumAttempts
    }

    /// Never reconnects: a dropped link fails the sender.
    public static let never = ReconnectPolicy(maximumAttempts: 0)

    /// The wait before attempt `attempt` (1-based).
    public func delay(beforeAttempt attempt: Int) -> Duration {
        let initial = initialDelay.secondsValue
        let maximum = maximumDelay.secondsValue
        var seconds = initial
        for _ in 1..<max(1, attempt) {
            seconds *= max(1, multiplier)
            if seconds >= maximum { break }
        }
        return .seconds(min(seconds, maximum))
    }
}

extension Duration {
    /// The duration in seconds as a floating-point number.
    var secondsValue: Double {
        let parts = components
        return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
    }

    /// `10 s`, `250 ms`.
    var shortDescription: String {
        let seconds = secondsValue
        if seconds < 1 { return "\(Int((seconds * 1000).rounded())) ms" }
        if seconds == seconds.rounded() { return "\(Int(seconds)) s" }
        return "\((seconds * 10).rounded() / 10) s"
    }
}

/// Settings of a ``CastSender``.
public struct CastSenderConfiguration: Sendable, Hashable {
    /// The sender's endpoint id in every message.
    public var sourceID: String
    /// How long to wait for the reply to an ordinary request.
    public var requestTimeout: Duration
    /// How long to wait for a LOAD or QUEUE_LOAD reply; devices answer once the media has loaded.
    public var loadTimeout: Duration
    /// How long to wait for a launched app to come up.
    public var launchTimeout: Duration
    /// What to do when the link drops.
    public var reconnect: ReconnectPolicy
    /// Incoming messages longer than this are dropped unread (devices send at most 64 KiB).
    public var maximumIncomingPayloadBytes: Int
    /// Events each listener may fall behind by before the oldest are dropped.
    public var eventBufferSize: Int

    /// Creates a configuration.
    public init(
        sourceID: String = CastFrame.defaultSourceID, requestTimeout: Duration = .seconds(10),
        loadTimeout: Duration = .seconds(30), launchTimeout: Duration = .seconds(30),
        reconnect: ReconnectPolicy = ReconnectPolicy(), maximumIncomingPayloadBytes: Int = 262_144,
        eventBufferSize: Int = 256
    ) {
        self.sourceID = sourceID
        self.requestTimeout = requestTimeout
        self.loadTimeout = loadTimeout
        self.launchTimeout = launchTimeout
        self.reconnect = reconnect
        self.maximumIncomingPayloadBytes = maximumIncomingPayloadBytes
        self.eventBufferSize = eventBufferSize
    }
}

// MARK: - State

/// Where the link to the device stands.
public enum CastConnectionState: Sendable, Hashable, CustomStringConvertible {
    /// Not connected yet.
    case disconnected
    /// The first connection is being made.
    case connecting
    /// Connected; requests go out.
    case connected
    /// The link dropped; attempt `attempt` of the reconnect policy is under way.
    case reconnecting(attempt: Int)
    /// Connecting or reconnecting gave up; the message says why.
    case failed(String)
    /// ``CastSender/close()`` was called.
    case closed

    public var description: String {
        switch self {
        case .disconnected: "disconnected"
        case .connecting: "connecting"
        case .connected: "connected"
        case .reconnecting(let attempt): "reconnecting (attempt \(attempt))"
        case .failed(let reason): "failed: \(reason)"
        case .closed: "closed"
        }
    }
}

/// A receiver app session the sender controls: what RECEIVER_STATUS says about it.
public struct CastSession: Sendable, Hashable {
    public var appID: String
    /// The app session id; receiver STOP takes it.
    public var sessionID: String?
    /// The endpoint media commands go to.
    public var transportID: String
    public var displayName: String?
    /// `WEB` or `ANDROID_TV` (Cast Connect).
    public var appType: String?
    public var statusText: String?
    public var namespaces: [String]

    /// Creates a session from a RECEIVER_STATUS application entry; nil when it has no transport id.
    public init?(application: ReceiverApplication) {
        guard let transportID = application.transportID, !transportID.isEmpty else { return nil }
        appID = application.appID ?? application.universalAppID ?? ""
        sessionID = application.sessionID
        self.transportID = transportID
        displayName = application.displayName
        appType = application.appType
        statusText = application.statusText
        namespaces = application.namespaces ?? []
    }
}

/// The queue part of the media state, which listeners watch separately.
public struct CastQueueState: Sendable, Hashable {
    /// The items the device last reported (often a window around the current item).
    public var items: [QueueItem]
    public var currentItemID: Int?
    public var loadingItemID: Int?
    public var repeatMode: RepeatMode?
    public var queueData: QueueData?

    /// The queue of `status`, or nil when it has no queue fields at all.
    public init?(status: MediaStatus?) {
        guard let status,
            status.items != nil || status.currentItemID != nil || status.repeatMode != nil || status.queueData != nil
        else { return nil }
        items = status.items ?? []
        currentItemID = status.currentItemID
        loadingItemID = status.loadingItemID
        repeatMode = status.repeatMode
        queueData = status.queueData
    }
}

/// What the sender knows about the device right now.
public struct CastSenderState: Sendable, Hashable {
    public var connection: CastConnectionState
    /// The last RECEIVER_STATUS.
    public var receiver: ReceiverStatus?
    /// The app session being controlled.
    public var session: CastSession?
    /// Every MEDIA_STATUS so far merged into one (partial updates keep earlier fields).
    public var media: MediaStatus?

    /// Creates a state, for code that describes one (status lines, tests).
    public init(
        connection: CastConnectionState, receiver: ReceiverStatus? = nil, session: CastSession? = nil,
        media: MediaStatus? = nil
    ) {
        self.connection = connection
        self.receiver = receiver
        self.session = session
        self.media = media
    }

    /// The device volume (not the stream volume).
    public var deviceVolume: CastVolume? { receiver?.volume }
    /// The queue part of ``media``.
    public var queue: CastQueueState? { CastQueueState(status: media) }
}

/// A QUEUE_CHANGE notice from the device.
public struct CastQueueChange: Sendable, Hashable {
    /// `INSERT`, `REMOVE`, `ITEMS_CHANGE`, `UPDATE`, `NO_CHANGE`.
    public var changeType: String?
    public var itemIDs: [Int]
    public var insertBefore: Int?
}

/// Something listeners may want to react to.
public enum CastSenderEvent: Sendable, Hashable {
    /// The link changed state (connected, reconnecting, failed…).
    case connectionChanged(CastConnectionState)
    /// A RECEIVER_STATUS arrived (apps, device volume).
    case receiverStatusChanged(ReceiverStatus)
    /// The controlled app session started, was joined, or ended (nil).
    case sessionChanged(CastSession?)
    /// After a reconnect, control of the running session was taken back without reloading.
    case sessionResumed(CastSession)
    /// The merged media state changed; nil when no media session remains.
    case mediaStatusChanged(MediaStatus?)
    /// The queue items, current item or repeat mode changed.
    case queueChanged(CastQueueState)
    /// The device announced a queue change (QUEUE_CHANGE).
    case queueChangeNotice(CastQueueChange)
    /// The device reported an error (requested or not), explained.
    case deviceError(CastErrorExplanation)
    /// A LAUNCH is waiting on the device (`USER_PENDING_AUTHORIZATION`, `USER_ALLOWED`).
    case launchStatus(String)
    /// A batch queue cast advanced.
    case queueCastProgress(QueueCastProgress)
    /// The validator had findings for a request about to be sent (warnings, or errors when forced).
    case validationFindings(messageType: String, [Diagnostic])
    /// A message from the device was dropped (too large, not JSON).
    case ignoredMessage(String)
}

// MARK: - Batch queue casting

/// How far a batch queue cast (QUEUE_LOAD plus QUEUE_INSERTs) has got.
///
/// Recorded as each message is confirmed, so a cast interrupted by a dropped link continues
/// with the first unconfirmed message instead of starting over.
public struct QueueCastProgress: Sendable, Hashable {
    /// Items in the queue being cast.
    public var totalItems: Int
    /// Items the device has confirmed receiving.
    public var deliveredItems: Int
    /// Messages planned (1 QUEUE_LOAD + QUEUE_INSERTs).
    public var totalMessages: Int
    /// Messages the device has confirmed.
    public var deliveredMessages: Int
    /// The media session the queue lives in, once known.
    public var mediaSessionID: Int?
    /// Times the cast continued after a reconnect.
    public var resumptions: Int
    /// Whether every item arrived and the start item was applied.
    public var isComplete: Bool

    /// Creates a progress record.
    public init(
        totalItems: Int, deliveredItems: Int, totalMessages: Int, deliveredMessages: Int, mediaSessionID: Int?,
        resumptions: Int, isComplete: Bool
    ) {
        self.totalItems = totalItems
        self.deliveredItems = deliveredItems
        self.totalMessages = totalMessages
        self.deliveredMessages = deliveredMessages
        self.mediaSessionID = mediaSessionID
        self.resumptions = resumptions
        self.isComplete = isComplete
    }
}

/// The outcome of a batch queue cast.
public struct QueueCastResult: Sendable, Hashable {
    /// The merged media state after the last message.
    public var status: MediaStatus?
    public var progress: QueueCastProgress
}

// MARK: - Replies

/// A message from the device that answered a request.
struct DeviceReply: Sendable {
    var type: String?
    var json: JSONValue
    var sourceID: String
    var namespace: CastNamespace
}
