import CastModel
public import JSONSupport

/// A virtual connection: the endpoint that sent CONNECT and the endpoint it connected to.
///
/// CASTV2 multiplexes endpoints over one TLS socket; a sender must CONNECT to `receiver-0`,
/// and then to an app's transport id, before the device accepts its messages or sends it that
/// endpoint's broadcasts.
public struct VirtualConnection: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The endpoint that sent CONNECT, usually a sender id such as `sender-0`.
    public var sourceID: String
    /// The endpoint it connected to: `receiver-0` or a transport id.
    public var destinationID: String

    /// Creates a pair.
    public init(sourceID: String, destinationID: String) {
        self.sourceID = sourceID
        self.destinationID = destinationID
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.sourceID, lhs.destinationID) < (rhs.sourceID, rhs.destinationID)
    }

    public var description: String { "\(sourceID) ⇄ \(destinationID)" }
}

/// The open virtual connections of one socket, kept from the CONNECT and CLOSE messages on
/// `urn:x-cast:com.google.cast.tp.connection` that pass in either direction.
///
/// Both sides use it: the device records the senders' CONNECTs to know who may talk to an app
/// and who gets its broadcasts; the sender records its own CONNECTs and the device's CLOSEs
/// (an app that stopped). A CLOSE ends the pair whichever endpoint sends it.
///
/// ```swift
/// var registry = VirtualConnectionRegistry()
/// registry.record(connectMessage)   // .opened(sender-0 ⇄ receiver-0, …)
/// registry.isOpen(between: "sender-0", and: "receiver-0")   // true
/// ```
public struct VirtualConnectionRegistry: Sendable, Hashable {
    /// What a message did to the registry.
    public enum Event: Sendable, Hashable {
        /// A CONNECT opened a new pair.
        case opened(VirtualConnection, ConnectRequest)
        /// A CONNECT for a pair that was already open; nothing changed.
        case alreadyOpen(VirtualConnection, ConnectRequest)
        /// A CLOSE ended an open pair; `reasonCode` is Chromium's CloseReason when sent.
        case closed(VirtualConnection, reasonCode: Int?)
        /// A CLOSE for a pair that was not open.
        case closedUnknown(VirtualConnection)
        /// A CONNECT that was not recorded, with why (broadcast destination, too many pairs).
        case refused(VirtualConnection, ChannelError)
        /// A message on the connection namespace that is not JSON with a `type`.
        case invalid(ChannelError)
        /// Another message type on the namespace, such as a receiver's `CONNECTED`.
        case ignored(type: String)
    }

    /// The most pairs one socket may hold; a hostile sender cannot grow the registry beyond it.
    public let limit: Int
    /// The open pairs.
    public private(set) var connections: Set<VirtualConnection> = []

    /// Creates an empty registry holding at most `limit` pairs.
    public init(limit: Int = 64) {
        self.limit = limit
    }

    /// Whether `first` and `second` are connected, whichever of them sent CONNECT.
    public func isOpen(between first: String, and second: String) -> Bool {
        connections.contains(VirtualConnection(sourceID: first, destinationID: second))
            || connections.contains(VirtualConnection(sourceID: second, destinationID: first))
    }

    /// The endpoints connected to `destinationID`, sorted: the senders a device addresses when
    /// it broadcasts from that endpoint.
    public func sources(connectedTo destinationID: String) -> [String] {
        connections.filter { $0.destinationID == destinationID }.map(\.sourceID).sorted()
    }

    /// Applies a CONNECT or CLOSE; returns nil for messages on other namespaces.
    @discardableResult
    public mutating func record(_ message: ChannelMessage) -> Event? {
        guard message.namespace == .connection else { return nil }
        let pair = VirtualConnection(sourceID: message.sourceID, destinationID: message.destinationID)
        guard case .string(let text) = message.payload else {
            return .invalid(
                ChannelError(
                    ChannelError.Code.messageInvalid,
                    "a \(CastNamespace.connection) message from \(message.sourceID) has a binary payload",
                    fix: "send CONNECT and CLOSE as JSON text (payload_type STRING)"))
        }
        guard let json = try? JSONParser().parse(Array(text.utf8)).value, let type = json["type"]?.stringValue else {
            return .invalid(
                ChannelError(
                    ChannelError.Code.messageInvalid,
                    "a \(CastNamespace.connection) message from \(message.sourceID) is not a JSON object with a \"type\"",
                    fix: "send {\"type\":\"CONNECT\"} or {\"type\":\"CLOSE\"}"))
        }
        switch type {
        case "CONNECT":
            let request = ConnectRequest(json: json)
            if connections.contains(pair) { return .alreadyOpen(pair, request) }
            if pair.destinationID == CastEndpointID.broadcast || pair.sourceID == CastEndpointID.broadcast {
                return .refused(
                    pair,
                    ChannelError(
                        ChannelError.Code.messageInvalid,
                        "CONNECT between \(pair.sourceID) and \(pair.destinationID) names the broadcast id",
                        fix: "connect to receiver-0 or to an app's transportId; '*' only addresses broadcasts"))
            }
            guard connections.count < limit else {
                return .refused(
                    pair,
                    ChannelError(
                        ChannelError.Code.messageInvalid,
                        "CONNECT from \(pair.sourceID) to \(pair.destinationID) would exceed \(limit) virtual connections on one socket",
                        fix: "CLOSE virtual connections that are no longer used"))
            }
            connections.insert(pair)
            return .opened(pair, request)
        case "CLOSE":
            let reverse = VirtualConnection(sourceID: pair.destinationID, destinationID: pair.sourceID)
            let reason = json["reasonCode"]?.intValue
            if connections.remove(pair) != nil { return .closed(pair, reasonCode: reason) }
            if connections.remove(reverse) != nil { return .closed(reverse, reasonCode: reason) }
            return .closedUnknown(pair)
        default:
            return .ignored(type: type)
        }
    }

    /// Forgets every pair, as when the socket closes.
    public mutating func removeAll() { connections.removeAll() }
}

/// The payload of a CONNECT: who the sender is and what kind of connection it wants.
///
/// Chromium and pychromecast send `userAgent`, `connType`, `origin` and `senderInfo`; openscreen
/// adds `protocolVersionList` and answers CONNECTED only when a version is offered. Members
/// this type does not model are ignored on reading.
public struct ConnectRequest: Sendable, Hashable {
    /// `senderInfo`, describing the sending platform.
    public struct SenderInfo: Sendable, Hashable {
        /// `sdkType`: 2 for the Chrome/web sender SDK, which is what Chromium and pychromecast send.
        public var sdkType: Int
        /// `version` of the sender SDK.
        public var version: String
        /// `browserVersion`.
        public var browserVersion: String
        /// `platform`: 0 other, 1 Android, 2 iOS, 3 Windows, 4 macOS, 5 ChromeOS, 6 Linux, 7 Cast device.
        public var platform: Int
        /// `systemVersion`, the operating system.
        public var systemVersion: String
        /// `connectionType`: 1 local network.
        public var connectionType: Int

        /// Creates sender info.
        public init(
            sdkType: Int = 2, version: String, browserVersion: String, platform: Int = 6, systemVersion: String,
            connectionType: Int = 1
        ) {
            self.sdkType = sdkType
            self.version = version
            self.browserVersion = browserVersion
            self.platform = platform
            self.systemVersion = systemVersion
            self.connectionType = connectionType
        }
    }

    /// `userAgent`.
    public var userAgent: String?
    /// `connType`: 0 strong, 1 weak, 2 invisible. Connections to `receiver-0` must be strong.
    public var connectionType: Int?
    /// `senderInfo`.
    public var senderInfo: SenderInfo?
    /// The protocol versions offered in `protocolVersion` and `protocolVersionList`.
    public var protocolVersions: [Int]

    /// Creates a request.
    public init(
        userAgent: String? = nil, connectionType: Int? = nil, senderInfo: SenderInfo? = nil,
        protocolVersions: [Int] = []
    ) {
        self.userAgent = userAgent
        self.connectionType = connectionType
        self.senderInfo = senderInfo
        self.protocolVersions = protocolVersions
    }

    /// What CastPrep's sender sends: a strong connection with the fields Chromium sends, so
    /// devices treat it like any other local sender.
    public static let castPrep = ConnectRequest(
        userAgent: "CastPrep", connectionType: 0,
        senderInfo: SenderInfo(version: "1.0", browserVersion: "CastPrep/1.0", systemVersion: "Linux"))

    /// Reads a CONNECT payload, keeping what has the expected types.
    public init(json: JSONValue) {
        userAgent = json["userAgent"]?.stringValue
        connectionType = json["connType"]?.intValue
        if let info = json["senderInfo"], info.objectValue != nil {
            senderInfo = SenderInfo(
                sdkType: info["sdkType"]?.intValue ?? 0, version: info["version"]?.stringValue ?? "",
                browserVersion: info["browserVersion"]?.stringValue ?? "", platform: info["platform"]?.intValue ?? 0,
                systemVersion: info["systemVersion"]?.stringValue ?? "",
                connectionType: info["connectionType"]?.intValue ?? 0)
        }
        var versions: [Int] = []
        if let single = json["protocolVersion"]?.intValue { versions.append(single) }
        for value in json["protocolVersionList"]?.arrayValue?.prefix(16) ?? [] {
            if let version = value.intValue, !versions.contains(version) { versions.append(version) }
        }
        protocolVersions = versions
    }

    /// The CONNECT payload, `type` included.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["type": "CONNECT", "origin": .object([:])]
        if let userAgent { members["userAgent"] = .string(userAgent) }
        if let connectionType { members["connType"] = JSONValue(connectionType) }
        if let info = senderInfo {
            members["senderInfo"] = [
                "sdkType": JSONValue(info.sdkType), "version": .string(info.version),
                "browserVersion": .string(info.browserVersion), "platform": JSONValue(info.platform),
                "systemVersion": .string(info.systemVersion), "connectionType": JSONValue(info.connectionType),
            ]
        }
        if !protocolVersions.isEmpty { members["protocolVersionList"] = .array(protocolVersions.map { JSONValue($0) }) }
        return .object(members)
    }
}

extension ChannelMessage {
    /// A CONNECT from `sourceID` to `destinationID`.
    public static func connect(
        from sourceID: String = CastEndpointID.platformSender, to destinationID: String,
        request: ConnectRequest = .castPrep
    ) -> ChannelMessage {
        ChannelMessage(
            sourceID: sourceID, destinationID: destinationID, namespace: .connection, json: request.jsonValue)
    }

    /// A CLOSE from `sourceID` to `destinationID`; `reasonCode` 5 is Chromium's "closed by self".
    public static func close(
        from sourceID: String = CastEndpointID.platformSender, to destinationID: String, reasonCode: Int? = 5
    ) -> ChannelMessage {
        var members: [String: JSONValue] = ["type": "CLOSE", "origin": .object([:])]
        if let reasonCode { members["reasonCode"] = JSONValue(reasonCode) }
        return ChannelMessage(
            sourceID: sourceID, destinationID: destinationID, namespace: .connection, json: .object(members))
    }

    /// A heartbeat PING.
    public static func ping(from sourceID: String, to destinationID: String) -> ChannelMessage {
        ChannelMessage(
            sourceID: sourceID, destinationID: destinationID, namespace: .heartbeat,
            payload: .string(#"{"type":"PING"}"#))
    }

    /// A heartbeat PONG.
    public static func pong(from sourceID: String, to destinationID: String) -> ChannelMessage {
        ChannelMessage(
            sourceID: sourceID, destinationID: destinationID, namespace: .heartbeat,
            payload: .string(#"{"type":"PONG"}"#))
    }
}
