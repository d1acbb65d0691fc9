/// One sender's transport connection (a TLS socket), as named by the transport.
///
/// A socket can carry several virtual connections (pychromecast uses `sender-0` for the
/// platform and the app; node-castv2-client adds a `client-NNNN` per app session), so the
/// device keys its bookkeeping by this id *and* the sender's endpoint id. The transport picks
/// the value; the device only compares it.
public struct SenderID: RawRepresentable, Sendable, Hashable, Comparable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
    public var description: String { rawValue }
    public static func < (lhs: SenderID, rhs: SenderID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// A CONNECT that the device accepted: on `sender`'s socket, endpoint `remoteID` (the sender's
/// source id) talks to the device endpoint `localID` (`receiver-0` or an app's transport id).
///
/// Connections decide two things: which messages the device answers (a message on a pair
/// that was never connected is dropped, as devices do) and who receives broadcasts (every
/// socket with a connection to the broadcasting endpoint).
public struct VirtualConnection: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var sender: SenderID
    /// The sender's endpoint id, such as `sender-0`.
    public var remoteID: String
    /// The device endpoint, such as `receiver-0`.
    public var localID: String

    /// Creates a connection record.
    public init(sender: SenderID, remoteID: String, localID: String) {
        self.sender = sender
        self.remoteID = remoteID
        self.localID = localID
    }

    public var description: String { "\(sender)/\(remoteID)→\(localID)" }

    public static func < (lhs: VirtualConnection, rhs: VirtualConnection) -> Bool {
        (lhs.sender, lhs.remoteID, lhs.localID) < (rhs.sender, rhs.remoteID, rhs.localID)
    }
}

/// Endpoint ids with a fixed meaning in CASTV2.
public enum CastEndpoint {
    /// The device platform: receiver namespace, RECEIVER_STATUS.
    public static let platform = "receiver-0"
    /// The destination of broadcasts.
    public static let broadcast = "*"
    /// The id devices use for their own heartbeats.
    public static let transport = "Tr@n$p0rt-0"
}
