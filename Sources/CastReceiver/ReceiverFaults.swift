public import CastModel
public import JSONSupport

/// Misbehaviour to script into the emulated device, for testing how a sender copes.
///
/// Set with ``ReceiverDevice/faults`` (or ``ReceiverHost/setFaults(_:)``), or read from JSON
/// with ``init(jsonText:)`` — the shape `castprep receiver --faults FILE` takes:
///
/// ```json
/// {"dropConnectionAfter": 3, "stopPongs": true, "refuseLaunch": {"CC1AD845": "CANCELLED"},
///  "failItems": [{"index": 1, "detailedErrorCode": 312}, {"contentId": "http://h/a.mp4", "detailedErrorCode": "MEDIA_DECODE"}],
///  "delayReplies": 2.5}
/// ```
public struct ReceiverFaults: Sendable, Hashable {
    /// Close a sender's socket once the device has answered this many of its messages
    /// (counted per socket; CONNECT/CLOSE and heartbeats are not counted).
    public var dropConnectionAfterMessages: Int?
    /// Limit ``dropConnectionAfterMessages`` to one socket; nil applies it to every socket.
    public var dropConnectionSender: SenderID?
    /// Stop answering PINGs on every socket (the transport stops sending PONG), so the sender's
    /// heartbeat times out while the socket stays open.
    public var stopAnsweringPings: Bool
    /// Apps whose LAUNCH fails, with the LAUNCH_ERROR reason to send (`CANCELLED` makes
    /// pychromecast retry once; `SYSTEM_ERROR`, `NOT_FOUND` and `BAD_PARAMETER` are final).
    public var refusedLaunches: [String: String]
    /// Items whose load fails with a given code instead of being fetched.
    public var failingItems: [ItemFailure]
    /// Hold every reply (a message carrying the request's `requestId`) this long; broadcasts
    /// still go out at once, as from a device whose answers are slow or lost.
    public var replyDelay: Duration?

    /// An item that fails to load.
    public struct ItemFailure: Sendable, Hashable {
        /// How the item is recognised.
        public enum Match: Sendable, Hashable {
            /// By `contentId` (or `contentUrl`).
            case contentID(String)
            /// By position in the play order when the item starts loading (0 is the first).
            case index(Int)
        }

        public var match: Match
        public var code: DetailedErrorCode

        /// Creates a failure rule.
        public init(_ match: Match, code: DetailedErrorCode) {
            self.match = match
            self.code = code
        }
    }

    /// No faults: a well-behaved device.
    public init(
        dropConnectionAfterMessages: Int? = nil, dropConnectionSender: SenderID? = nil,
        stopAnsweringPings: Bool = false,
        refusedLaunches: [String: String] = [:], failingItems: [ItemFailure] = [], replyDelay: Duration? = nil
    ) {
        self.dropConnectionAfterMessages = dropConnectionAfterMessages
        self.dropConnectionSender = dropConnectionSender
        self.stopAnsweringPings = stopAnsweringPings
        self.refusedLaunches = refusedLaunches
        self.failingItems = failingItems
        self.replyDelay = replyDelay
    }

    /// Whether no fault is set.
    public var isEmpty: Bool { self == ReceiverFaults() }

    /// The scripted failure code for an item about to load at `index` of the play order.
    func failure(for media: MediaInformation?, atIndex index: Int) -> DetailedErrorCode? {
        failingItems.first { rule in
            switch rule.match {
            case .contentID(let id): id == media?.contentID || id == media?.contentURL
            case .index(let wanted): wanted == index
            }
        }?.code
    }
}

/// Why a faults document was refused.
public struct ReceiverFaultsError: CodedError, Hashable {
    /// A stable code, `faults.*`.
    public var code: DiagnosticCode
    public var message: String
    public var fix: String?
    /// The JSON syntax error, when the file is not JSON at all.
    public var syntaxError: JSONSyntaxError?

    public var cause: (any CodedError)? { syntaxError }
}

extension ReceiverFaults {
    /// Reads faults from JSON text (see the type's documentation for the shape).
    ///
    /// - Throws: ``ReceiverFaultsError`` naming the member that is wrong and how to write it;
    ///   unknown members are refused too, so a typo does not silently disable a fault.
    public init(jsonText: String) throws(ReceiverFaultsError) {
        let json: JSONValue
        do {
            json = try JSONParser(limits: .init(maxDepth: 16, maxStringBytes: 4096, maxDocumentBytes: 1 << 20)).parse(
                jsonText
            ).value
        } catch {
            throw ReceiverFaultsError(
                code: "faults.syntax", message: "the faults file is not valid JSON",
                fix: "check it with castprep validate or a JSON linter",
                syntaxError: error)
        }
        guard case .object(let members) = json else {
            throw ReceiverFaultsError(
                code: "faults.not-object", message: "faults must be a JSON object, not \(json.typeName)",
                fix: "write { \"stopPongs\": true, … }")
        }
        self.init()
        let known = [
            "dropConnectionAfter", "dropConnectionSender", "stopPongs", "refuseLaunch", "failItems", "delayReplies",
        ]
        for key in members.keys.sorted() where !known.contains(key) {
            throw ReceiverFaultsError(
                code: "faults.unknown-member", message: "faults has no member \"\(key)\"",
                fix: "use one of: \(known.joined(separator: ", "))")
        }
        func wrongType(_ key: String, _ expected: String) -> ReceiverFaultsError {
            ReceiverFaultsError(
                code: "faults.type-mismatch", message: "faults.\(key) must be \(expected)",
                fix: "write \(key) as \(expected)")
        }
        if let value = members["dropConnectionAfter"] {
            guard let count = value.intValue, count >= 1 else {
                throw wrongType("dropConnectionAfter", "a whole number of messages, 1 or more")
            }
            dropConnectionAfterMessages = count
        }
        if let value = members["dropConnectionSender"] {
            guard let name = value.stringValue else { throw wrongType("dropConnectionSender", "a sender id string") }
            dropConnectionSender = SenderID(name)
        }
        if let value = members["stopPongs"] {
            guard let flag = value.boolValue else { throw wrongType("stopPongs", "true or false") }
            stopAnsweringPings = flag
        }
        switch members["refuseLaunch"] {
        case nil: break
        case .array(let ids)?:
            for id in ids {
                guard let appID = id.stringValue else {
                    throw wrongType("refuseLaunch", "a list of app ids or an object appId → reason")
                }
                refusedLaunches[appID] = "CANCELLED"
            }
        case .object(let reasons)?:
            for (appID, reason) in reasons {
                guard let text = reason.stringValue, !text.isEmpty else {
                    throw wrongType("refuseLaunch.\(appID)", "a LAUNCH_ERROR reason such as \"CANCELLED\"")
                }
                refusedLaunches[appID] = text
            }
        default:
            throw wrongType("refuseLaunch", "a list of app ids or an object appId → reason")
        }
        if let value = members["failItems"] {
            guard case .array(let rules) = value else {
                throw wrongType("failItems", "a list of {index|contentId, detailedErrorCode}")
            }
            for (position, rule) in rules.enumerated() {
                let match: ItemFailure.Match
                if let index = rule["index"]?.intValue, index >= 0 {
                    match = .index(index)
                } else if let content = rule["contentId"]?.stringValue {
                    match = .contentID(content)
                } else {
                    throw wrongType("failItems[\(position)]", "an object with \"index\" (0 or more) or \"contentId\"")
                }
                let code: DetailedErrorCode?
                switch rule["detailedErrorCode"] {
                case .number(let number)?: code = number.intValue.map(DetailedErrorCode.init(rawValue:))
                case .string(let name)?: code = DetailedErrorCode(parsing: name)
                case nil: code = .mediaSourceNotSupported
                default: code = nil
                }
                guard let code else {
                    throw wrongType(
                        "failItems[\(position)].detailedErrorCode",
                        "a code number such as 104 or a name such as \"MEDIA_SRC_NOT_SUPPORTED\"")
                }
                failingItems.append(ItemFailure(match, code: code))
            }
        }
        if let value = members["delayReplies"] {
            guard let seconds = value.doubleValue, seconds >= 0, seconds <= 3600 else {
                throw wrongType("delayReplies", "seconds from 0 to 3600")
            }
            replyDelay = .seconds(exactly: seconds)
        }
    }
}
