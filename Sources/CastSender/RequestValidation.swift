public import CastModel
import JSONSupport

/// Checks the requests CastModel's ``CastValidator`` does not cover (SEEK, SET_VOLUME,
/// QUEUE_UPDATE…) and the frame size of every message with the ids it will really carry.
///
/// The sender runs this and ``CastValidator`` before every send; a request with an
/// error-level finding is not sent unless the caller forces it.
public struct SenderRequestValidator: Sendable {
    /// Creates a validator.
    public init() {}

    /// Validates a SEEK.
    public func validate(_ request: SeekRequest) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if request.currentTime == nil, request.relativeTime == nil {
            findings.append(
                Diagnostic(.error, "seek.position-missing", "SEEK has neither currentTime nor relativeTime",
                           fix: "set currentTime (seconds from the start) or relativeTime (seconds from now)", path: .root))
        }
        if let time = request.currentTime {
            if !time.isFinite {
                findings.append(
                    Diagnostic(.error, "seek.position-invalid", "currentTime \(time) is not a number of seconds",
                               fix: "use a finite number of seconds", path: .root.appending("currentTime")))
            } else if time < 0 {
                findings.append(
                    Diagnostic(.error, "seek.position-negative", "currentTime \(format(time)) is before the start",
                               fix: "use 0 to seek to the start, or relativeTime to move backwards",
                               path: .root.appending("currentTime")))
            }
        }
        if let offset = request.relativeTime, !offset.isFinite {
            findings.append(
                Diagnostic(.error, "seek.position-invalid", "relativeTime \(offset) is not a number of seconds",
                           fix: "use a finite number of seconds", path: .root.appending("relativeTime")))
        }
        if let state = request.resumeState, !state.isKnown {
            findings.append(unknown(state, field: "resumeState", path: .root.appending("resumeState")))
        }
        return findings + frameFindings(request)
    }

    /// Validates a SET_PLAYBACK_RATE with the same range CastValidator applies to LOAD.
    public func validate(_ request: SetPlaybackRateRequest) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if let rate = request.playbackRate {
            if !rate.isFinite || rate <= 0 {
                findings.append(
                    Diagnostic(.error, "load.playback-rate-range", "playbackRate \(format(rate)) must be greater than 0",
                               fix: "use 1 for normal speed", path: .root.appending("playbackRate")))
            } else if rate < 0.5 || rate > 2 {
                findings.append(
                    Diagnostic(.warning, "load.playback-rate-range",
                               "playbackRate \(format(rate)) is outside 0.5–2, the range receivers support",
                               fix: "use a rate between 0.5 and 2", path: .root.appending("playbackRate")))
            }
        } else if request.relativePlaybackRate == nil {
            findings.append(
                Diagnostic(.error, "rate.missing", "SET_PLAYBACK_RATE has neither playbackRate nor relativePlaybackRate",
                           fix: "set playbackRate, e.g. 1.5", path: .root))
        }
        if let factor = request.relativePlaybackRate, !factor.isFinite || factor <= 0 {
            findings.append(
                Diagnostic(.error, "load.playback-rate-range", "relativePlaybackRate \(format(factor)) must be greater than 0",
                           fix: "use a factor such as 1.25", path: .root.appending("relativePlaybackRate")))
        }
        return findings + frameFindings(request)
    }

    /// Validates a device SET_VOLUME.
    public func validate(_ request: ReceiverSetVolumeRequest) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if request.volume.level == nil, request.volume.muted == nil {
            findings.append(
                Diagnostic(.error, "volume.empty", "SET_VOLUME carries neither level nor muted",
                           fix: "set volume.level (0 to 1) or volume.muted", path: .root.appending("volume")))
        }
        if let level = request.volume.level, !level.isFinite || level < 0 || level > 1 {
            findings.append(
                Diagnostic(.error, "volume.level-range", "volume level \(format(level)) is outside 0…1",
                           fix: "use a fraction: 0.5 is half volume, 1 is full", path: .root.appending("volume").appending("level")))
        }
        return findings + frameFindings(request)
    }

    /// Validates a QUEUE_UPDATE.
    public func validate(_ request: QueueUpdateRequest) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if let mode = request.repeatMode, !mode.isKnown {
            findings.append(unknown(mode, field: "repeatMode", path: .root.appending("repeatMode")))
        }
        if let jump = request.jump, jump == 0 {
            findings.append(
                Diagnostic(.note, "queue.jump-zero", "QUEUE_UPDATE jump 0 stays on the current item",
                           fix: "use 1 for next, -1 for previous", path: .root.appending("jump")))
        }
        if let id = request.currentItemID, id <= 0 {
            findings.append(invalidItemID(id, path: .root.appending("currentItemId")))
        }
        if let time = request.currentTime, !time.isFinite || time < 0 {
            findings.append(
                Diagnostic(.error, "seek.position-negative", "currentTime \(format(time)) is not a position in the item",
                           fix: "use 0 or more seconds", path: .root.appending("currentTime")))
        }
        return findings + frameFindings(request)
    }

    /// Validates a QUEUE_REMOVE.
    public func validate(_ request: QueueRemoveRequest) -> [Diagnostic] {
        itemIDFindings(request.itemIDs, verb: "remove") + frameFindings(request)
    }

    /// Validates a QUEUE_REORDER.
    public func validate(_ request: QueueReorderRequest) -> [Diagnostic] {
        var findings = itemIDFindings(request.itemIDs, verb: "move")
        if let before = request.insertBefore {
            if before <= 0 { findings.append(invalidItemID(before, path: .root.appending("insertBefore"))) }
            if request.itemIDs.contains(before) {
                findings.append(
                    Diagnostic(.error, "queue.reorder-before-itself", "insertBefore \(before) is one of the items being moved",
                               fix: "insert before an item that stays in place", path: .root.appending("insertBefore")))
            }
        }
        return findings + frameFindings(request)
    }

    /// The frame-size check for any request, with the real source and destination ids.
    ///
    /// CastValidator measures against a GUID-length destination; an app whose transport id is
    /// longer would otherwise slip past it.
    public func frameFindings(_ request: some CastRequest, sourceID: String = CastFrame.defaultSourceID,
                              destinationID: String = CastFrame.typicalDestinationID) -> [Diagnostic] {
        let payload = JSONWriter.compact.bytes(from: request.jsonValue).count
        let body = CastFrame.bodySize(payloadSize: payload, namespace: type(of: request).namespace, sourceID: sourceID,
                                      destinationID: destinationID)
        guard body > CastFrame.maximumBodySize else { return [] }
        return [
            Diagnostic(
                .error, "message.frame-too-large",
                "the \(type(of: request).messageType) message is \(body) bytes on the wire; Cast devices reject messages over \(CastFrame.maximumBodySize) bytes (64 KiB)",
                fix: "send fewer items per message, or trim metadata and customData", path: .root),
        ]
    }

    /// The largest JSON payload that fits one frame between these two endpoints.
    public static func maximumPayloadSize(namespace: CastNamespace, sourceID: String, destinationID: String) -> Int {
        var size = CastFrame.maximumBodySize
        while CastFrame.bodySize(payloadSize: size, namespace: namespace, sourceID: sourceID, destinationID: destinationID)
            > CastFrame.maximumBodySize
        {
            size -= 1
        }
        return size
    }

    // MARK: Shared rules

    private func itemIDFindings(_ ids: [Int], verb: String) -> [Diagnostic] {
        var findings: [Diagnostic] = []
        if ids.isEmpty {
            findings.append(
                Diagnostic(.error, "queue.item-ids-empty", "no item ids to \(verb)",
                           fix: "list the itemId values from the queue (castprep status shows them)", path: .root.appending("itemIds")))
        }
        var seen: Set<Int> = []
        for (index, id) in ids.enumerated() {
            if id <= 0 { findings.append(invalidItemID(id, path: .root.appending("itemIds").appending(index: index))) }
            if !seen.insert(id).inserted {
                findings.append(
                    Diagnostic(.error, "queue.item-id-duplicate", "item id \(id) is listed twice",
                               fix: "list each item once", path: .root.appending("itemIds").appending(index: index)))
            }
        }
        return findings
    }

    private func invalidItemID(_ id: Int, path: JSONPath) -> Diagnostic {
        Diagnostic(.error, "queue.item-id-invalid", "item id \(id) cannot exist; receivers number items from 1",
                   fix: "use an itemId reported in MEDIA_STATUS", path: path)
    }

    private func unknown<V: CastVocabulary>(_ value: V, field: String, path: JSONPath) -> Diagnostic {
        Diagnostic(.error, "value.unknown", "\(field) \"\(value.rawValue)\" is not a known value; the receiver rejects it",
                   fix: "use one of: \(V.knownValues.map(\.rawValue).joined(separator: ", "))", path: path)
    }

    private func format(_ value: Double) -> String { JSONNumber(value)?.literal ?? String(value) }
}
