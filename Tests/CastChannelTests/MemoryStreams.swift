import CastModel
import SystemIO

@testable import CastChannel

/// One direction of an in-memory connection: bytes written at one end, read at the other.
final class MemoryPipe {
    var bytes: [UInt8] = []
    /// The most bytes held; a write beyond it takes what fits, or would block.
    var capacity: Int
    /// The writer shut its side down (a FIN).
    var writerClosed = false
    /// The connection was reset: both ends fail.
    var isReset = false

    init(capacity: Int) { self.capacity = capacity }
}

/// A ``ByteStream`` over two ``MemoryPipe``s, for driving the channel's layers without a
/// socket: ``pair(capacity:)`` gives both ends of one connection.
final class MemoryStream: ByteStream {
    let incoming: MemoryPipe
    let outgoing: MemoryPipe

    init(incoming: MemoryPipe, outgoing: MemoryPipe) {
        self.incoming = incoming
        self.outgoing = outgoing
    }

    /// Both ends of a connection whose pipes each hold at most `capacity` bytes.
    static func pair(capacity: Int = 1 << 20) -> (MemoryStream, MemoryStream) {
        let forward = MemoryPipe(capacity: capacity)
        let backward = MemoryPipe(capacity: capacity)
        return (
            MemoryStream(incoming: backward, outgoing: forward), MemoryStream(incoming: forward, outgoing: backward)
        )
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult {
        if incoming.isReset { return .reset }
        guard !incoming.bytes.isEmpty else { return incoming.writerClosed ? .endOfStream : .wouldBlock }
        let count = min(buffer.count, incoming.bytes.count)
        buffer.copyBytes(from: incoming.bytes[0..<count])
        incoming.bytes.removeFirst(count)
        return .transferred(count)
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult {
        if outgoing.isReset { return .reset }
        if outgoing.writerClosed { return .failed("written after shutdown") }
        let room = outgoing.capacity - outgoing.bytes.count
        guard room > 0, !bytes.isEmpty else { return .wouldBlock }
        let count = min(room, bytes.count)
        outgoing.bytes += bytes[0..<count]
        return .transferred(count)
    }

    func flush() -> StreamResult? { nil }

    func shutdownWrite() { outgoing.writerClosed = true }

    var hasBufferedInput: Bool { false }
    var hasPendingOutput: Bool { false }

    // MARK: - Playing the peer

    /// Writes framed messages as the peer.
    func send(_ messages: ChannelMessage...) throws {
        for message in messages { try sendRaw(ChannelFraming.frame(message)) }
    }

    /// Writes bytes as the peer, all of them.
    func sendRaw(_ bytes: [UInt8]) throws {
        let result = bytes.withUnsafeBytes { write($0) }
        guard result == .transferred(bytes.count) else { throw MemoryStreamFull(result: result) }
    }

    /// Reads everything waiting and decodes it as frames.
    func receive(with decoder: inout ChannelFrameDecoder) throws -> [ChannelMessage] {
        var waiting = [UInt8](repeating: 0, count: 1 << 16)
        var messages: [ChannelMessage] = []
        while case .transferred(let count) = waiting.withUnsafeMutableBytes({ read(into: $0) }) {
            messages += try decoder.append(waiting[0..<count])
        }
        return messages
    }
}

struct MemoryStreamFull: Error {
    let result: StreamResult
}

/// A ``ChannelEndpoint`` that records what the handler delivers and serves a queue the test fills.
final class RecordingEndpoint: ChannelEndpoint {
    var outbound: [UInt8] = []
    var received: [ChannelMessage] = []
    /// nil while open; `.success` after a local close, `.failure` with the reason otherwise.
    var ending: Result<Void, ChannelError>?
    var finishCount = 0
    /// How many messages the consumer buffers before it counts as full.
    var capacity = Int.max

    func takeOutbound() -> [UInt8] {
        defer { outbound = [] }
        return outbound
    }

    func receive(_ message: ChannelMessage) -> Bool {
        guard received.count < capacity else { return false }
        received.append(message)
        return true
    }

    func finish(reason: ChannelError?) {
        finishCount += 1
        ending = reason.map { .failure($0) } ?? .success(())
    }

    /// Queues a message as `CastChannelConnection.send` would.
    func queue(_ message: ChannelMessage) throws {
        outbound += try ChannelFraming.frame(message)
    }

    var endingCode: String? {
        guard case .failure(let error) = ending else { return nil }
        return error.code.rawValue
    }

    var endedCleanly: Bool {
        if case .success = ending { return true }
        return false
    }
}
