/// When and how a side of the link pings, and when it gives up on a silent peer.
///
/// Heartbeats run on `urn:x-cast:com.google.cast.tp.heartbeat`. pychromecast pings
/// `sender-0 → receiver-0` every 10 s and gives up after 20 s without a PONG; devices ping
/// senders with `Tr@n$p0rt-0` as both source and destination.
public struct HeartbeatPolicy: Sendable, Hashable {
    /// Time between PINGs.
    public var interval: Duration
    /// How many PINGs in a row may go unanswered; at the next tick the link is declared dead,
    /// so a peer that stops answering is dropped after about `(maximumMissedPongs + 1) × interval`.
    public var maximumMissedPongs: Int
    /// The PING's source id.
    public var sourceID: String
    /// The PING's destination id.
    public var destinationID: String

    /// Creates a policy.
    public init(interval: Duration, maximumMissedPongs: Int, sourceID: String, destinationID: String) {
        self.interval = interval
        self.maximumMissedPongs = maximumMissedPongs
        self.sourceID = sourceID
        self.destinationID = destinationID
    }

    /// A sender's heartbeat: every 5 s to `receiver-0`, dead after 3 missed PONGs (about 20 s,
    /// pychromecast's limit).
    public static let sender = HeartbeatPolicy(
        interval: .seconds(5), maximumMissedPongs: 3, sourceID: CastEndpointID.platformSender,
        destinationID: CastEndpointID.platformReceiver)

    /// A device's heartbeat: every 5 s from and to `Tr@n$p0rt-0`, dead after 3 missed PONGs.
    public static let device = HeartbeatPolicy(
        interval: .seconds(5), maximumMissedPongs: 3, sourceID: CastEndpointID.deviceTransport,
        destinationID: CastEndpointID.deviceTransport)
}

/// How one connection behaves: heartbeat, limits, and certificate pinning.
public struct ChannelOptions: Sendable, Hashable {
    /// The PINGs this side sends, or nil to send none (go-chromecast never pings).
    public var heartbeat: HeartbeatPolicy?
    /// Whether a PING is answered with a PONG automatically (source and destination swapped).
    /// Turning it off simulates a hung peer.
    public var answersPings: Bool
    /// Whether heartbeat messages also appear in ``CastChannelConnection/messages``.
    public var deliversHeartbeats: Bool
    /// The most bytes ``CastChannelConnection/send(_:)`` may queue before it throws
    /// ``ChannelError/Code/outboundQueueFull``: a peer that stops reading costs at most this much.
    public var maximumQueuedOutboundBytes: Int
    /// The most received messages buffered for a consumer that has not read them; beyond it the
    /// connection closes with ``ChannelError/Code/inboundOverflow``.
    public var maximumBufferedInboundMessages: Int
    /// How long ``CastChannelConnection/close()`` waits for queued messages to go out.
    public var closeFlushTimeout: Duration
    /// When set, a client refuses a device whose certificate has another SHA-256, with
    /// ``ChannelError/Code/certificateMismatch``. Devices are not verified otherwise: they
    /// present self-signed certificates.
    public var pinnedCertificateSHA256: [UInt8]?

    /// Creates options.
    public init(
        heartbeat: HeartbeatPolicy?, answersPings: Bool = true, deliversHeartbeats: Bool = false,
        maximumQueuedOutboundBytes: Int = 1 << 20, maximumBufferedInboundMessages: Int = 1024,
        closeFlushTimeout: Duration = .seconds(2), pinnedCertificateSHA256: [UInt8]? = nil
    ) {
        self.heartbeat = heartbeat
        self.answersPings = answersPings
        self.deliversHeartbeats = deliversHeartbeats
        self.maximumQueuedOutboundBytes = maximumQueuedOutboundBytes
        self.maximumBufferedInboundMessages = maximumBufferedInboundMessages
        self.closeFlushTimeout = closeFlushTimeout
        self.pinnedCertificateSHA256 = pinnedCertificateSHA256
    }

    /// A sender: pings `receiver-0` (``HeartbeatPolicy/sender``).
    public static let sender = ChannelOptions(heartbeat: .sender)
    /// A device: pings from `Tr@n$p0rt-0` (``HeartbeatPolicy/device``).
    public static let device = ChannelOptions(heartbeat: .device)
}

/// The address of the other end of a connection.
public struct ChannelPeerAddress: Sendable, Hashable, CustomStringConvertible {
    /// The numeric IP address, such as `127.0.0.1` or `::1`.
    public var host: String
    /// The TCP port.
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `127.0.0.1:8009`, or `[::1]:8009` for IPv6.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
