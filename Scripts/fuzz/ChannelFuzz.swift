// libFuzzer entry point for CastChannel's decoders: the CastMessage protobuf codec, the
// incremental frame decoder, and CONNECT/CLOSE payloads. Built by Scripts/fuzz/channel;
// CHANNEL_FUZZ_TARGET picks what the input is fed to.
import CastChannel
import CastModel
import Glibc
import JSONSupport

/// Which decoder to exercise, read once.
let fuzzTarget: String = getenv("CHANNEL_FUZZ_TARGET").map { String(cString: $0) } ?? "message"

/// Decodes a whole stream, keeping the messages decoded before any failure and the failure's code.
func decodeStream(_ chunks: [ArraySlice<UInt8>]) -> (messages: [ChannelMessage], failure: DiagnosticCode?) {
    var decoder = ChannelFrameDecoder()
    var messages: [ChannelMessage] = []
    do {
        for chunk in chunks {
            try decoder.append(chunk) { (message: ChannelMessage) throws(ChannelError) in messages.append(message) }
        }
        try decoder.finish()
        return (messages, nil)
    } catch {
        return (messages, error.code)
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch fuzzTarget {
    case "frames":
        // The first byte sets the chunk size; chunked and whole decoding must agree exactly.
        guard let first = bytes.first else { return 0 }
        let stream = Array(bytes.dropFirst())
        let chunkSize = Int(first % 64) + 1
        let chunks = stride(from: 0, to: stream.count, by: chunkSize).map { stream[$0..<min(stream.count, $0 + chunkSize)] }
        let whole = decodeStream([stream[...]])
        let chunked = decodeStream(chunks)
        guard whole.messages == chunked.messages, whole.failure == chunked.failure else {
            fatalError("chunked decoding (size \(chunkSize)) disagrees with whole decoding")
        }
    case "connection":
        // The input as the JSON payload of a message on the connection namespace.
        let text = String(decoding: bytes, as: UTF8.self)
        let message = ChannelMessage(sourceID: "sender-0", destinationID: "receiver-0", namespace: .connection, payload: .string(text))
        var registry = VirtualConnectionRegistry(limit: 4)
        if case .opened(_, let request)? = registry.record(message) {
            guard ConnectRequest(json: request.jsonValue) == request else { fatalError("ConnectRequest does not round-trip") }
        }
        _ = registry.record(ChannelMessage.close(from: "receiver-0", to: "sender-0"))
        guard registry.connections.isEmpty else { fatalError("CLOSE did not end the pair") }
    default:
        // Any message that decodes must re-encode to bytes that decode to the same message.
        guard let message = try? ChannelMessage(protobuf: bytes) else { return 0 }
        let encoded = message.protobufEncoded()
        guard encoded.count == message.protobufSize, (try? ChannelMessage(protobuf: encoded)) == message else {
            fatalError("protobuf round trip changed the message")
        }
        if let frame = try? ChannelFraming.frame(message) {
            var decoder = ChannelFrameDecoder()
            guard (try? decoder.append(frame)) == [message] else { fatalError("framing round trip changed the message") }
        }
    }
    return 0
}
