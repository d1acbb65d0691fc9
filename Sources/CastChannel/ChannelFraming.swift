public import CastModel

/// The CASTV2 frame: a 4-byte big-endian length, then that many bytes of CastMessage.
public enum ChannelFraming {
    /// Bytes in the length prefix.
    public static let headerSize = 4

    /// Frames `message`: the length prefix followed by the protobuf body.
    /// - Throws: ``ChannelError/Code/frameTooLarge`` when the body exceeds
    ///   `CastFrame.maximumBodySize` (64 KiB), which devices reject.
    public static func frame(_ message: ChannelMessage) throws(ChannelError) -> [UInt8] {
        let size = message.protobufSize
        guard size <= CastFrame.maximumBodySize else {
            throw ChannelError(
                ChannelError.Code.frameTooLarge,
                "the message on \(message.namespace) is \(size) bytes; Cast devices reject messages over \(CastFrame.maximumBodySize) bytes (64 KiB)",
                fix: "split the request (QueuePlanner splits long queues) or shorten its metadata and customData")
        }
        var output: [UInt8] = []
        output.reserveCapacity(headerSize + size)
        output.append(UInt8(truncatingIfNeeded: size >> 24))
        output.append(UInt8(truncatingIfNeeded: size >> 16))
        output.append(UInt8(truncatingIfNeeded: size >> 8))
        output.append(UInt8(truncatingIfNeeded: size))
        message.appendProtobuf(to: &output)
        return output
    }
}

/// Turns a byte stream cut into arbitrary chunks back into messages.
///
/// Feed it whatever a read returned; it keeps the unfinished tail (at most one header and one
/// 64 KiB body) until the rest arrives. A length prefix above 64 KiB is rejected as soon as its
/// four bytes are in, before any of the body is buffered. Zero-length frames are skipped:
/// openscreen never sends them and go-chromecast ignores them, so a stray one is not worth
/// dropping the link over.
///
/// ```swift
/// var decoder = ChannelFrameDecoder()
/// for chunk in chunks { for message in try decoder.append(chunk) { handle(message) } }
/// try decoder.finish()   // throws if the stream stopped inside a frame
/// ```
///
/// After it throws, the decoder stays failed: every later call throws the same error, since
/// the stream cannot be resynchronised once a frame boundary is lost.
public struct ChannelFrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var failure: ChannelError?
    /// The largest body accepted.
    public let maximumBodySize: Int
    /// How many zero-length frames were skipped.
    public private(set) var emptyFramesSkipped = 0

    /// Creates a decoder that accepts bodies up to `maximumBodySize` bytes (64 KiB by default,
    /// the limit devices enforce).
    public init(maximumBodySize: Int = CastFrame.maximumBodySize) {
        self.maximumBodySize = maximumBodySize
    }

    /// Bytes received but not yet part of a complete frame.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Appends a chunk and returns every message it completes, in order.
    public mutating func append(_ chunk: some Collection<UInt8>) throws(ChannelError) -> [ChannelMessage] {
        var messages: [ChannelMessage] = []
        try append(chunk) { message in messages.append(message) }
        return messages
    }

    /// Appends a chunk and hands each message it completes to `body`, without collecting them.
    public mutating func append(
        _ chunk: some Collection<UInt8>, _ body: (ChannelMessage) throws(ChannelError) -> Void
    ) throws(ChannelError) {
        try append(chunk) { (message: ChannelMessage, _: ArraySlice<UInt8>) throws(ChannelError) in try body(message) }
    }

    /// Appends a chunk and hands each message it completes to `body` together with the
    /// frame's bytes as received (length header included), for recorders that check the wire form.
    public mutating func append(
        _ chunk: some Collection<UInt8>, _ body: (ChannelMessage, ArraySlice<UInt8>) throws(ChannelError) -> Void
    ) throws(ChannelError) {
        if let failure { throw failure }
        buffer.append(contentsOf: chunk)
        do throws(ChannelError) {
            while buffer.count - readIndex >= ChannelFraming.headerSize {
                let length =
                    Int(buffer[readIndex]) << 24 | Int(buffer[readIndex + 1]) << 16
                    | Int(buffer[readIndex + 2]) << 8 | Int(buffer[readIndex + 3])
                guard length <= maximumBodySize else {
                    throw ChannelError(
                        ChannelError.Code.frameTooLarge,
                        "a frame declares a \(length)-byte body; Cast limits messages to \(maximumBodySize) bytes (64 KiB)",
                        fix:
                            "the peer must split large requests; a length this size also means the stream is not CASTV2 framing"
                    )
                }
                let bodyStart = readIndex + ChannelFraming.headerSize
                guard buffer.count - bodyStart >= length else { break }
                readIndex = bodyStart + length
                if length == 0 {
                    emptyFramesSkipped += 1
                    continue
                }
                try body(
                    try ChannelMessage(protobuf: buffer, range: bodyStart..<(bodyStart + length)),
                    buffer[(bodyStart - ChannelFraming.headerSize)..<(bodyStart + length)])
            }
        } catch {
            failure = error
            throw error
        }
        compact()
    }

    /// Checks that the stream ended on a frame boundary.
    /// - Throws: ``ChannelError/Code/frameTruncated`` when a partial frame is buffered.
    public func finish() throws(ChannelError) {
        if let failure { throw failure }
        let pending = bufferedByteCount
        guard pending == 0 else {
            throw ChannelError(
                ChannelError.Code.frameTruncated,
                "the stream ended \(pending) bytes into a frame",
                fix: "the peer closed the connection in the middle of a message")
        }
    }

    /// Drops consumed bytes once they make up most of the buffer, so appends stay amortised
    /// O(1) and the buffer never holds more than one frame plus one chunk.
    private mutating func compact() {
        if readIndex == buffer.count {
            // Keep a small buffer for the next frame; release one grown by a large message, so
            // hundreds of idle links do not each hold 64 KiB.
            buffer.removeAll(keepingCapacity: buffer.capacity <= 16 * 1024)
            readIndex = 0
        } else if readIndex > 4096, readIndex * 2 > buffer.count {
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
    }
}
