public import CastModel
public import JSONSupport

/// A message the device sends on one sender's socket.
public struct OutgoingMessage: Sendable, Hashable, CustomStringConvertible {
    /// The socket to write to.
    public var sender: SenderID
    /// The device endpoint sending (`receiver-0`, an app transport id).
    public var sourceID: String
    /// The sender's endpoint id for a reply, `*` for a broadcast.
    public var destinationID: String
    public var namespace: CastNamespace
    /// The JSON payload (compact, keys sorted).
    public var payload: JSONValue

    /// Creates a message.
    public init(sender: SenderID, sourceID: String, destinationID: String, namespace: CastNamespace, payload: JSONValue)
    {
        self.sender = sender
        self.sourceID = sourceID
        self.destinationID = destinationID
        self.namespace = namespace
        self.payload = payload
    }

    /// The payload as the JSON text that goes into the frame.
    public var payloadText: String { JSONWriter.compact.string(from: payload) }
    /// The payload's `type`, or `responseType` for GET_APP_AVAILABILITY answers.
    public var type: String? { payload["type"]?.stringValue ?? payload["responseType"]?.stringValue }
    /// The payload's `requestId`: the request it answers, 0 for a broadcast.
    public var requestID: Int? { payload["requestId"]?.intValue }
    /// Whether this is a broadcast copy rather than a reply.
    public var isBroadcast: Bool { destinationID == CastEndpoint.broadcast }

    public var description: String { "\(sender) \(sourceID)→\(destinationID) \(payloadText)" }
}

/// Something the device wants done after an input.
///
/// Messages, connection drops and pong suppression are for the transport;
/// ``fetchMedia(_:)`` is for the host that owns the device (``ReceiverHost`` runs it with a
/// ``MediaFetching`` and reports the outcome back).
public enum ReceiverOutput: Sendable, Hashable, CustomStringConvertible {
    /// Send this message.
    case message(OutgoingMessage)
    /// Send CLOSE from `localID` to `remoteID` on `sender`'s socket: the device refuses a
    /// CONNECT to an endpoint that does not exist, and closes an app's connections when the
    /// app stops. The device has already forgotten the connection.
    case closeVirtualConnection(sender: SenderID, localID: String, remoteID: String)
    /// Fault: close this sender's socket without a goodbye.
    case dropConnection(SenderID)
    /// Fault: stop answering this sender's PINGs (the socket stays open).
    case stopAnsweringPings(SenderID)
    /// For the host: check this media and call ``ReceiverDevice/completeFetch(_:outcome:)``.
    case fetchMedia(MediaFetchRequest)

    /// The message, when this output is one.
    public var message: OutgoingMessage? {
        if case .message(let message) = self { return message }
        return nil
    }

    /// Whether the transport acts on this output (everything but ``fetchMedia(_:)``).
    public var isForTransport: Bool {
        if case .fetchMedia = self { return false }
        return true
    }

    public var description: String {
        switch self {
        case .message(let message): "message \(message)"
        case .closeVirtualConnection(let sender, let localID, let remoteID): "close \(sender) \(localID)→\(remoteID)"
        case .dropConnection(let sender): "drop \(sender)"
        case .stopAnsweringPings(let sender): "stop-pongs \(sender)"
        case .fetchMedia(let request):
            "fetch #\(request.ticket) item \(request.itemID) \(request.media.playbackURL ?? "")"
        }
    }
}
