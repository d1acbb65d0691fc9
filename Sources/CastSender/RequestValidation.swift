public import CastModel
import JSONSupport

/// Checks the control requests (SEEK, SET_VOLUME, QUEUE_UPDATE…) with CastModel's
/// ``CastValidator`` rules, and the frame size of every message with the ids it will really carry.
///
/// The sender runs this and ``CastValidator`` before every send; a request with an
/// error-level finding is not sent unless the caller forces it.
public struct SenderRequestValidator: Sendable {
    /// The request rules, shared with receivers and `castprep validate`.
    private let rules = CastValidator()

    /// Creates a validator.
    public init() {}

    /// Validates a SEEK.
    public func validate(_ request: SeekRequest) -> [Diagnostic] {
        rules.validate(request) + frameFindings(request)
    }

    /// Validates a SET_PLAYBACK_RATE with the same range CastValidator applies to LOAD.
    public func validate(_ request: SetPlaybackRateRequest) -> [Diagnostic] {
        rules.validate(request) + frameFindings(request)
    }

    /// Validates a device SET_VOLUME.
    public func validate(_ request: ReceiverSetVolumeRequest) -> [Diagnostic] {
        rules.validate(request) + frameFindings(request)
    }

    /// Validates a QUEUE_UPDATE.
    public func validate(_ request: QueueUpdateRequest) -> [Diagnostic] {
        rules.validate(request) + frameFindings(request)
    }

    /// Validates a QUEUE_REMOVE.
    public func validate(_ request: QueueRemoveRequest) -> [Diagnostic] {
        rules.validate(request) + frameFindings(request)
    }

    /// Validates a QUEUE_REORDER.
    public func validate(_ request: QueueReorderRequest) -> [Diagnostic] {
        rules.validate(request) + frameFindings(request)
    }

    /// The frame-size check for any request, with the real source and destination ids.
    ///
    /// CastValidator measures against a GUID-length destination; an app whose transport id is
    /// longer would otherwise slip past it.
    public func frameFindings(
        _ request: some CastRequest, sourceID: String = CastFrame.defaultSourceID,
        destinationID: String = CastFrame.typicalDestinationID
    ) -> [Diagnostic] {
        let payload = JSONWriter.compact.bytes(from: request.jsonValue).count
        let body = CastFrame.bodySize(
            payloadSize: payload, namespace: type(of: request).namespace, sourceID: sourceID,
            destinationID: destinationID)
        guard body > CastFrame.maximumBodySize else { return [] }
        return [
            Diagnostic(
                .error, "message.frame-too-large",
                "the \(type(of: request).messageType) message is \(body) bytes on the wire; Cast devices reject messages over \(CastFrame.maximumBodySize) bytes (64 KiB)",
                fix: "send fewer items per message, or trim metadata and customData", path: .root)
        ]
    }

    /// The largest JSON payload that fits one frame between these two endpoints.
    public static func maximumPayloadSize(namespace: CastNamespace, sourceID: String, destinationID: String) -> Int {
        var size = CastFrame.maximumBodySize
        while CastFrame.bodySize(
            payloadSize: size, namespace: namespace, sourceID: sourceID, destinationID: destinationID)
            > CastFrame.maximumBodySize
        {
            size -= 1
        }
        return size
    }
}
