internal import COpenSSL
import SystemIO

/// The TLS layer as a state machine over any ``ByteStream``: handshake, read, write,
/// close_notify and the half-close after it.
///
/// OpenSSL never touches the socket. It reads records from a memory BIO this stream fills
/// from the transport below, and writes records to a memory BIO this stream empties into the
/// transport, so the same code runs over a TCP socket or over in-memory streams in tests, and
/// OpenSSL itself never blocks: only the transport can say ``StreamResult/wouldBlock``.
///
/// Bounded: the read BIO holds at most one transport read (16 KiB) at a time, and a
/// ``write(_:)`` is refused with ``StreamResult/wouldBlock`` while more than
/// ``maximumPendingOutput`` bytes of records wait for the transport.
///
/// Lives on one thread (the loop's, or a test's); every OpenSSL object it holds is freed in
/// `deinit`.
final class TLSStream: ByteStream {
    /// Which side of the handshake this is.
    enum Role {
        /// Connects out; `serverName` goes into SNI when it is a name, not an address.
        case client(serverName: String?)
        case server
    }

    /// How a handshake step went.
    enum HandshakeStep: Equatable {
        case complete
        /// Waiting for the peer; drive it again when the transport is readable (or writable,
        /// when ``hasPendingOutput``).
        case inProgress
        /// Failed: OpenSSL's error code and status, and its error queue as text.
        case failed(code: Int32, status: Int32, reason: String)
    }

    /// Records waiting to go out beyond which ``write(_:)`` refuses more plaintext.
    static let maximumPendingOutput = 64 * 1024
    /// Bytes read from the transport at a time.
    private static let transportChunk = 16 * 1024

    let transport: any ByteStream
    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    /// Records taken from OpenSSL and not yet accepted by the transport.
    private var outgoing: [UInt8] = []
    private var outgoingOffset = 0
    private var halfCloseWhenFlushed = false
    private var halfClosed = false
    private let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: transportChunk, alignment: 1)
    /// The transport reported end of stream; OpenSSL has been told.
    private(set) var transportEnded = false
    /// The first bytes the peer sent before the handshake completed, at most
    /// ``PeerIdentification/sampleSize``: what kind of server answered, when it is no Cast device.
    private(set) var handshakeSample: [UInt8] = []
    private(set) var isHandshakeComplete = false

    /// - Throws: ``ChannelError/Code/handshakeFailed`` when OpenSSL cannot make the session.
    init(context: OpaquePointer, role: Role, over transport: any ByteStream) throws(ChannelError) {
        OpenSSLSetup.ensure()
        guard let ssl = castprep_SSL_new(context) else {
            throw ChannelError(
                ChannelError.Code.handshakeFailed, "cannot create a TLS session: \(OpenSSLErrors.drain())",
                fix: "check that OpenSSL 3 (libssl3) is installed")
        }
        guard let readBIO = castprep_BIO_new(castprep_BIO_s_mem()),
            let writeBIO = castprep_BIO_new(castprep_BIO_s_mem())
        else {
            castprep_SSL_free(ssl)
            throw ChannelError(
                ChannelError.Code.handshakeFailed, "cannot create the TLS session's buffers: \(OpenSSLErrors.drain())",
                fix: "the process may be out of memory")
        }
        castprep_SSL_set_bio(ssl, readBIO, writeBIO)  // the session owns both from here
        self.ssl = ssl
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        self.transport = transport
        switch role {
        case .client(let serverName):
            castprep_SSL_set_connect_state(ssl)
            if let serverName { _ = castprep_SSL_set_tlsext_host_name(ssl, serverName) }
        case .server:
            castprep_SSL_set_accept_state(ssl)
        }
    }

    deinit {
        castprep_SSL_free(ssl)
        castprep_ERR_clear_error()
        scratch.deallocate()
    }

    /// The certificate the peer presented, once the handshake completed.
    var peerCertificate: ChannelCertificate? { TLSContexts.peerCertificate(of: ssl) }

    // MARK: - Handshake

    /// Runs the handshake as far as the transport allows.
    func handshake() -> HandshakeStep {
        while true {
            castprep_ERR_clear_error()
            let status = castprep_SSL_do_handshake(ssl)
            if let failure = pumpOut(), failure != .wouldBlock {
                return .failed(code: SSL_ERROR_SYSCALL, status: -1, reason: describe(failure))
            }
            if status == 1 {
                isHandshakeComplete = true
                return .complete
            }
            let code = castprep_SSL_get_error(ssl, status)
            guard code == SSL_ERROR_WANT_READ, !transportEnded else {
                return .failed(code: code, status: status, reason: OpenSSLErrors.describe(code: code, status: status))
            }
            switch pullIn() {
            case .transferred, .endOfStream: continue
            case .wouldBlock: return .inProgress
            case .reset: return .failed(code: SSL_ERROR_SYSCALL, status: -1, reason: "the peer reset the connection")
            case .failed(let reason): return .failed(code: SSL_ERROR_SYSCALL, status: -1, reason: reason)
            }
        }
    }

    // MARK: - ByteStream

    func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamResult {
        while true {
            castprep_ERR_clear_error()
            let count = castprep_SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
            if count > 0 {
                // Reading may have produced records to send (a TLS 1.3 key update answer).
                if let failure = pumpOut(), failure != .wouldBlock { return failure }
                return .transferred(Int(count))
            }
            let code = castprep_SSL_get_error(ssl, count)
            switch code {
            case SSL_ERROR_WANT_READ where !transportEnded:
                switch pullIn() {
                case .transferred, .endOfStream: continue
                case let other: return other
                }
            case SSL_ERROR_WANT_READ, SSL_ERROR_ZERO_RETURN:
                return .endOfStream
            case SSL_ERROR_SYSCALL where castprep_ERR_peek_error() == 0:
                // The transport ended without close_notify: an orderly end, as
                // SSL_OP_IGNORE_UNEXPECTED_EOF makes it for sockets.
                return .endOfStream
            default:
                return .failed(OpenSSLErrors.describe(code: code, status: count))
            }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> StreamResult {
        if outgoing.count - outgoingOffset > Self.maximumPendingOutput {
            if let failure = pumpOut() { return failure }
            guard outgoing.count - outgoingOffset <= Self.maximumPendingOutput else { return .wouldBlock }
        }
        guard !bytes.isEmpty else { return .wouldBlock }
        castprep_ERR_clear_error()
        let written = castprep_SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        guard written > 0 else {
            let code = castprep_SSL_get_error(ssl, written)
            return .failed(OpenSSLErrors.describe(code: code, status: written))
        }
        // The memory BIO took the records; a transport that is full keeps them in `outgoing`.
        if let failure = pumpOut(), failure != .wouldBlock { return failure }
        return .transferred(Int(written))
    }

    func flush() -> StreamResult? {
        guard let failure = pumpOut(), failure != .wouldBlock else { return nil }
        return failure
    }

    /// Sends close_notify, then half-closes the transport once the records before it are out.
    func shutdownWrite() {
        guard !halfCloseWhenFlushed else { return }
        halfCloseWhenFlushed = true
        castprep_ERR_clear_error()
        _ = castprep_SSL_shutdown(ssl)
        castprep_ERR_clear_error()
        _ = pumpOut()
    }

    var hasBufferedInput: Bool { castprep_SSL_pending(ssl) > 0 || castprep_BIO_ctrl_pending(readBIO) > 0 }
    var hasPendingOutput: Bool { outgoingOffset < outgoing.count || castprep_BIO_ctrl_pending(writeBIO) > 0 }

    // MARK: - Moving records

    /// Reads one chunk from the transport into OpenSSL's read BIO.
    private func pullIn() -> StreamResult {
        let result = transport.read(into: scratch)
        switch result {
        case .transferred(let count):
            if !isHandshakeComplete, handshakeSample.count < PeerIdentification.sampleSize {
                let room = PeerIdentification.sampleSize - handshakeSample.count
                handshakeSample += UnsafeRawBufferPointer(rebasing: scratch[0..<min(count, room)])
            }
            _ = castprep_BIO_write(readBIO, scratch.baseAddress, Int32(count))
        case .endOfStream:
            transportEnded = true
            _ = castprep_BIO_set_mem_eof_return(readBIO, 0)
        case .wouldBlock, .reset, .failed:
            break
        }
        return result
    }

    /// Moves records from OpenSSL's write BIO to the transport, as far as it takes them, then
    /// half-closes the transport when asked and everything is out. Returns what stopped it:
    /// nil when everything went out, ``StreamResult/wouldBlock``, or a failure.
    private func pumpOut() -> StreamResult? {
        while castprep_BIO_ctrl_pending(writeBIO) > 0 {
            let count = castprep_BIO_read(writeBIO, scratch.baseAddress, Int32(scratch.count))
            guard count > 0 else { break }
            outgoing += UnsafeRawBufferPointer(rebasing: scratch[0..<Int(count)])
        }
        while outgoingOffset < outgoing.count {
            let result = outgoing.withUnsafeBytes { bytes in
                transport.write(UnsafeRawBufferPointer(rebasing: bytes[outgoingOffset...]))
            }
            switch result {
            case .transferred(let count): outgoingOffset += count
            case .wouldBlock, .endOfStream:
                compactOutgoing()
                return .wouldBlock
            case .reset, .failed:
                return result
            }
        }
        outgoing.removeAll(keepingCapacity: outgoing.capacity <= 32 * 1024)
        outgoingOffset = 0
        if halfCloseWhenFlushed, !halfClosed {
            halfClosed = true
            transport.shutdownWrite()
        }
        return nil
    }

    private func compactOutgoing() {
        guard outgoingOffset > 16 * 1024, outgoingOffset * 2 > outgoing.count else { return }
        outgoing.removeSubrange(0..<outgoingOffset)
        outgoingOffset = 0
    }

    private func describe(_ result: StreamResult) -> String {
        switch result {
        case .reset: "the peer reset the connection"
        case .failed(let reason): reason
        default: "the transport failed"
        }
    }
}

@available(*, unavailable)
extension TLSStream: Sendable {}

extension OpenSSLErrors {
    /// OpenSSL's error queue as text, or what the error code means when the queue is empty.
    static func describe(code: Int32, status: Int32) -> String {
        let queue = drain()
        if !queue.isEmpty { return queue }
        if code == SSL_ERROR_SYSCALL {
            return status == 0 ? "the peer closed the connection" : "error \(SystemCallError.lastErrorNumber)"
        }
        return "OpenSSL error \(code)"
    }
}
