/// Splits a long queue into messages that each fit in one Cast frame.
///
/// A QUEUE_LOAD of a few hundred items with artwork and tracks passes the 64 KiB frame
/// limit, and a device drops an oversized frame without a word. The planner packs as many
/// items as fit into the QUEUE_LOAD and appends the rest with QUEUE_INSERT messages, each
/// also under the limit.
public struct QueuePlanner: Sendable {
    /// The planned messages, in the order to send them.
    public struct Plan: Sendable, Hashable {
        public var queueLoad: QueueLoadRequest
        /// Sent after the QUEUE_LOAD succeeds, each with the `mediaSessionId` it reported.
        public var inserts: [QueueInsertRequest]
        /// When the start item did not fit in the first message: the sender should jump to
        /// this index (QUEUE_UPDATE) once the inserts are done.
        public var deferredStartIndex: Int?
    }

    /// Why a queue cannot be planned.
    public enum PlanError: CodedError, Hashable {
        case empty
        /// One item alone is larger than a frame.
        case itemTooLarge(index: Int, bytes: Int)

        /// `queue.items-missing` or `message.frame-too-large`.
        public var code: DiagnosticCode {
            switch self {
            case .empty: "queue.items-missing"
            case .itemTooLarge: "message.frame-too-large"
            }
        }

        public var message: String {
            switch self {
            case .empty: "the queue has no items"
            case .itemTooLarge(let index, let bytes):
                "queue item \(index) alone is \(bytes) bytes of JSON, more than a Cast message can carry"
            }
        }

        public var fix: String? {
            switch self {
            case .empty: "give at least one item"
            case .itemTooLarge: "trim its metadata, tracks or customData"
            }
        }
    }

    /// The payload budget; the real limit unless a test wants a smaller one.
    public var maximumPayloadSize: Int

    /// Creates a planner for the real frame limit.
    public init(maximumPayloadSize: Int = CastFrame.maximumPayloadSize(namespace: .media)) {
        self.maximumPayloadSize = maximumPayloadSize
    }

    /// Plans the messages for `items` (which must not carry item ids).
    public func plan(items: [QueueItem], startIndex: Int = 0, repeatMode: RepeatMode? = nil) throws(PlanError) -> Plan {
        guard !items.isEmpty else { throw .empty }
        var batches: [[QueueItem]] = [[]]
        // Overhead of an empty message of each kind, measured rather than guessed.
        let loadOverhead = QueueLoadRequest(
            requestID: Int(Int32.max), items: [], startIndex: startIndex, repeatMode: repeatMode
        ).jsonText.utf8.count
        let insertOverhead = QueueInsertRequest(requestID: Int(Int32.max), mediaSessionID: Int(Int32.max), items: [])
            .jsonText.utf8.count
        var used = loadOverhead
        for (index, item) in items.enumerated() {
            let size = item.jsonText.utf8.count + 1  // +1 for the separating comma
            // An item may end up in either kind of message, so it must fit the larger envelope.
            if size + max(loadOverhead, insertOverhead) > maximumPayloadSize {
                throw .itemTooLarge(index: index, bytes: size)
            }
            if used + size > maximumPayloadSize, let last = batches.last, !last.isEmpty {
                batches.append([])
                used = insertOverhead
            }
            batches[batches.count - 1].append(item)
            used += size
        }
        let firstCount = batches[0].count
        let startsInFirst = startIndex < firstCount
        let load = QueueLoadRequest(
            items: batches[0], startIndex: startsInFirst ? startIndex : 0, repeatMode: repeatMode)
        let inserts = batches.dropFirst().map { QueueInsertRequest(items: $0) }
        return Plan(queueLoad: load, inserts: inserts, deferredStartIndex: startsInFirst ? nil : startIndex)
    }
}
