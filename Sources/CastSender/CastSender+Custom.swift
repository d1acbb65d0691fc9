import CastModel
public import JSONSupport

extension CastSender {
    /// Sends `payload` on an app's own namespace (`urn:x-cast:…`) to the joined session.
    ///
    /// Custom namespaces define their own replies, so none is awaited; the message is written
    /// once the link is up (during a reconnect it waits for the new link, like every request).
    /// - Throws: `sender.no-session` without a joined app; `sender.request-invalid` for a
    ///   namespace outside `urn:x-cast:` or a payload that does not fit one CASTV2 frame;
    ///   `sender.send-failed` when the link cannot take it.
    public func sendCustomMessage(namespace: String, payload: JSONValue) async throws {
        let current = try requireSession()
        guard namespace.hasPrefix("urn:x-cast:"), namespace.utf8.count <= 128 else {
            throw CastSenderError(
                code: CastSenderError.Code.requestInvalid, message: "'\(namespace.prefix(60))' is not a Cast namespace",
                fix: "use urn:x-cast: followed by the app's name, such as urn:x-cast:com.example.player")
        }
        let text = JSONWriter.compact.string(from: payload)
        let size = CastFrame.bodySize(
            payloadSize: text.utf8.count, namespace: CastNamespace(rawValue: namespace),
            sourceID: configuration.sourceID, destinationID: current.transportID)
        guard size <= CastFrame.maximumBodySize else {
            throw CastSenderError(
                code: CastSenderError.Code.requestInvalid,
                message:
                    "the message on \(namespace) makes a \(size)-byte frame; the limit is \(CastFrame.maximumBodySize)",
                fix: "send a smaller message")
        }
        let link = try await usableLink()
        do {
            try await link.transport.send(
                SenderMessage(
                    sourceID: configuration.sourceID, destinationID: current.transportID,
                    namespace: CastNamespace(rawValue: namespace), payload: text))
        } catch {
            throw CastSenderError(
                code: CastSenderError.Code.sendFailed, message: "could not send the message on \(namespace): \(error)",
                fix: "the link is probably down; the sender reconnects by itself")
        }
    }
}
