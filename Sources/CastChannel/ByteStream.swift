import SystemIO

/// What a read or write on a ``ByteStream`` did.
enum StreamResult: Equatable {
    /// This many bytes moved (more than zero).
    case transferred(Int)
    /// Nothing can move now: wait until the socket below polls ready (or, in memory, until the
    /// other end acts).
    case wouldBlock
    /// The peer ended its side in order (TCP FIN, or TLS close_notify). Reads only.
    case endOfStream
    /// The peer reset the connection (ECONNRESET, EPIPE).
    case reset
    /// Anything else; the text says what.
    case failed(String)
}

/// A non-blocking byte stream, the seam between the channel's layers.
///
/// The layers stack: a ``SocketStream`` (TCP), a ``TLSStream`` over any byte stream, and the
/// ``ChannelHandler`` over any byte stream. Tests put in-memory streams under the TLS stream
/// or straight under the handler, and drive them on virtual time without a socket.
///
/// Every method runs on the loop's thread and returns at once.
protocol ByteStream: AnyObject {
    /// Reads at most `buffer.count` bytes.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult
    /// Takes as many of `bytes` as it can now; never ``StreamResult/endOfStream``.
    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult
    /// Pushes out bytes a layer holds back (TLS records not yet taken by the socket); nil when
    /// nothing failed.
    func flush() -> StreamResult?
    /// Ends the sending side once everything written so far has gone out (TLS close_notify,
    /// then the TCP half-close). Reading continues.
    func shutdownWrite()
    /// Bytes held that a read returns without the socket becoming readable again.
    var hasBufferedInput: Bool { get }
    /// Bytes held that still wait for the socket to poll writable.
    var hasPendingOutput: Bool { get }
}

/// A ``ByteStream`` over a non-blocking TCP socket. The kernel buffers, so nothing is held here.
final class SocketStream: ByteStream {
    let socket: TCPSocket

    init(_ socket: TCPSocket) {
        self.socket = socket
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult {
        Self.result(socket.read(into: buffer))
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult {
        Self.result(socket.write(bytes))
    }

    func flush() -> StreamResult? { nil }

    func shutdownWrite() {
        socket.shutdownWrite()
    }

    var hasBufferedInput: Bool { false }
    var hasPendingOutput: Bool { false }

    static func result(_ io: StreamIO) -> StreamResult {
        switch io {
        case .transferred(let count): .transferred(count)
        case .wouldBlock: .wouldBlock
        case .endOfStream: .endOfStream
        case .failed(let error) where error.isConnectionReset: .reset
        case .failed(let error): .failed("\(error.reason) (errno \(error.errno))")
        }
    }
}

@available(*, unavailable)
extension SocketStream: Sendable {}
