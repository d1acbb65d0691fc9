public import CastModel
public import JSONSupport

/// One line of the device's message log: a message in or out, or something the device noticed
/// that no message carries (a dropped message, a caption track that will not show).
///
/// `castprep receiver --log FILE` writes ``jsonLine`` for each entry, so a session can be
/// replayed, diffed or grepped; every line is one JSON object with sorted keys.
public struct ReceiverLogEntry: Sendable, Hashable {
    /// Which way the entry goes.
    public enum Direction: String, Sendable, Hashable {
        /// A message from a sender.
        case incoming = "in"
        /// A message to a sender.
        case outgoing = "out"
        /// A connection change, an ignored message or a finding.
        case event
    }

    public var direction: Direction
    /// Device time of the entry.
    public var time: Duration
    public var sender: SenderID?
    public var sourceID: String?
    public var destinationID: String?
    public var namespace: String?
    /// The payload parsed, or as a string when it was not valid JSON.
    public var payload: JSONValue?
    /// For events: what happened.
    public var note: String?
    /// For events about a request: the findings behind the device's answer.
    public var diagnostics: [Diagnostic]

    /// Creates an entry.
    public init(
        direction: Direction, time: Duration, sender: SenderID? = nil, sourceID: String? = nil,
        destinationID: String? = nil, namespace: String? = nil, payload: JSONValue? = nil, note: String? = nil,
        diagnostics: [Diagnostic] = []
    ) {
        self.direction = direction
        self.time = time
        self.sender = sender
        self.sourceID = sourceID
        self.destinationID = destinationID
        self.namespace = namespace
        self.payload = payload
        self.note = note
        self.diagnostics = diagnostics
    }

    /// Seconds of device time, with millisecond precision.
    public var seconds: Double {
        time.milliseconds / 1000
    }

    /// The entry as a JSON object.
    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = ["direction": .string(direction.rawValue), "time": JSONValue(seconds)]
        if let sender { members["sender"] = .string(sender.rawValue) }
        if let sourceID { members["source"] = .string(sourceID) }
        if let destinationID { members["destination"] = .string(destinationID) }
        if let namespace { members["namespace"] = .string(namespace) }
        if let payload { members["payload"] = payload }
        if let note { members["note"] = .string(note) }
        if !diagnostics.isEmpty {
            members["diagnostics"] = .array(
                diagnostics.map { diagnostic in
                    var object: [String: JSONValue] = [
                        "severity": .string(diagnostic.severity.rawValue), "code": .string(diagnostic.code.rawValue),
                        "message": .string(diagnostic.message),
                    ]
                    if let fix = diagnostic.fix { object["fix"] = .string(fix) }
                    if let path = diagnostic.path { object["path"] = .string(path.description) }
                    if let url = diagnostic.url { object["url"] = .string(url) }
                    return .object(object)
                })
        }
        return .object(members)
    }

    /// One line of JSON, without the newline.
    public var jsonLine: String { JSONWriter.compact.string(from: jsonValue) }
}
