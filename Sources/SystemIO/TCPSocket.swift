import Glibc

/// What a non-blocking read or write did.
public enum StreamIO: Sendable, Hashable {
    /// This many bytes moved (more than zero).
    case transferred(Int)
    /// Nothing can move now; wait for the descriptor to poll ready.
    case wouldBlock
    /// The peer ended its side (reads only).
    case endOfStream
    /// The call failed; the connection is broken.
    case failed(SystemCallError)
}

/// A non-blocking, close-on-exec TCP socket: a descriptor with the calls a loop makes on it.
///
/// A value, like swift-nio's socket handle: the owner calls ``close()`` exactly once (a loop
/// does, when the connection ends). Every call returns at once; readiness comes from a
/// ``Reactor`` registration of ``descriptor``.
///
/// ```swift
/// let socket = try TCPSocket.open(family: address.family)
/// if try socket.connect(to: address) == .inProgress { /* wait for writable, then */ try socket.finishConnect() }
/// ```
public struct TCPSocket: Sendable, Hashable {
    /// The file descriptor.
    public let descriptor: Int32

    /// Wraps a descriptor that is already a non-blocking stream socket.
    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    /// A new non-blocking, close-on-exec TCP socket with Nagle's delay off (Cast and HTTP send
    /// small requests that wait for their answer).
    ///
    /// - Throws: ``SystemCallError`` (`socket`) when the process is out of descriptors.
    public static func open(family: Int32) throws(SystemCallError) -> TCPSocket {
        let descriptor = socket(
            family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw SystemCallError("socket", errno: errno) }
        let socket = TCPSocket(descriptor: descriptor)
        socket.setOption(level: Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return socket
    }

    /// How a non-blocking connect went.
    public enum ConnectProgress: Sendable, Hashable {
        /// Connected at once (loopback often is).
        case connected
        /// Under way: wait for the socket to poll writable, then call ``finishConnect()``.
        case inProgress
    }

    /// Starts connecting to `address`.
    ///
    /// - Throws: ``SystemCallError`` (`connect`) when it failed at once (refused on loopback,
    ///   no route).
    public func connect(to address: SocketAddress) throws(SystemCallError) -> ConnectProgress {
        let status = address.withSockaddr { Glibc.connect(descriptor, $0, $1) }
        if status == 0 { return .connected }
        let code = errno
        guard code == EINPROGRESS else { throw SystemCallError("connect", errno: code) }
        return .inProgress
    }

    /// The outcome of a connect that was in progress, once the socket polled writable.
    ///
    /// - Throws: ``SystemCallError`` (`connect`) with the error the connection ended with.
    public func finishConnect() throws(SystemCallError) {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length) != 0 { code = errno }
        guard code == 0 else { throw SystemCallError("connect", errno: code) }
    }

    /// Reads what is waiting, at most `buffer.count` bytes; retries interrupted reads.
    public func read(into buffer: UnsafeMutableRawBufferPointer) -> StreamIO {
        while true {
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            if count > 0 { return .transferred(count) }
            if count == 0 { return buffer.isEmpty ? .wouldBlock : .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case let code: return .failed(SystemCallError("read", errno: code))
            }
        }
    }

    /// Copies up to `count` waiting bytes without consuming them (`MSG_PEEK`).
    public func peek(count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var waiting = [UInt8](repeating: 0, count: count)
        let got = waiting.withUnsafeMutableBytes {
            recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT))
        }
        return got > 0 ? Array(waiting.prefix(got)) : []
    }

    /// Writes as much of `bytes` as the kernel takes. A peer that has gone away reads as
    /// `EPIPE`, never as SIGPIPE (`MSG_NOSIGNAL`), on any thread.
    public func write(_ bytes: UnsafeRawBufferPointer) -> StreamIO {
        guard !bytes.isEmpty else { return .wouldBlock }
        while true {
            let count = send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
            if count > 0 { return .transferred(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case let code: return .failed(SystemCallError("send", errno: code))
            }
        }
    }

    /// Copies up to `buffer.count` waiting bytes into `buffer` without consuming them, without
    /// waiting: the count, 0 when the peer has ended its side with nothing waiting, or -1 when
    /// nothing is waiting yet (or the call failed).
    public func peek(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard !buffer.isEmpty else { return -1 }
        return recv(descriptor, buffer.baseAddress, buffer.count, Int32(MSG_PEEK | MSG_DONTWAIT))
    }

    /// What the peer has done to the connection, looked at without waiting.
    public enum PeerState: Sendable, Hashable {
        /// Nothing unusual (maybe bytes are waiting).
        case open
        /// The peer shut down its sending side (`POLLRDHUP`); what it sent may still wait.
        case closedWriting
        /// The connection is reset or hung up (`POLLERR`, `POLLHUP`).
        case broken
    }

    /// Polls the socket once without waiting for how the peer left it.
    public var peerState: PeerState {
        // POLLRDHUP is Linux's; the C library's Swift module shows it only under _GNU_SOURCE.
        let peerClosedWriting: Int16 = 0x2000
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN) | peerClosedWriting, revents: 0)
        guard poll(&entry, 1, 0) == 1 else { return .open }
        if entry.revents & (Int16(POLLERR) | Int16(POLLHUP)) != 0 { return .broken }
        return entry.revents & peerClosedWriting != 0 ? .closedWriting : .open
    }

    /// Ends the sending side (TCP FIN); reading continues until the peer ends its side.
    public func shutdownWrite() {
        _ = shutdown(descriptor, Int32(SHUT_WR))
    }

    /// Ends both directions: whoever reads the socket (another library's thread) sees its end
    /// at once. The descriptor stays open until its owner closes it.
    public func shutdownBoth() {
        _ = shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// The address this socket is bound to.
    public var localAddress: SocketAddress? { Self.address(of: descriptor, getsockname) }

    /// The address of the peer.
    public var peerAddress: SocketAddress? { Self.address(of: descriptor, getpeername) }

    /// Sets an integer socket option (`SO_REUSEADDR`, `TCP_NODELAY`…); failures are ignored,
    /// as every option set here is an optimisation.
    public func setOption(level: Int32, _ option: Int32, _ value: Int32) {
        var value = value
        _ = setsockopt(descriptor, level, option, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Closes the descriptor. Call once.
    public func close() {
        _ = Glibc.close(descriptor)
    }

    static func address(
        of descriptor: Int32, _ call: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { call(descriptor, $0, &length) }
        }
        guard status == 0 else { return nil }
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
    }
}

/// A non-blocking TCP listener.
///
/// ```swift
/// let listener = try ListeningSocket.bind(to: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
/// listener.localAddress?.port                       // the port the system chose
/// // when it polls readable:
/// while case .accepted(let socket, let peer) = listener.accept() { … }
/// ```
public struct ListeningSocket: Sendable, Hashable {
    /// The file descriptor.
    public let descriptor: Int32

    /// Binds `address` (with `SO_REUSEADDR`, so a restarted server gets its port back at once)
    /// and listens.
    ///
    /// - Parameter ipv6Only: for an IPv6 address, whether it serves IPv6 only (`true`) or IPv4
    ///   too, as mapped addresses (`false`: one `::` bind covers both families); nil keeps the
    ///   system's default.
    /// - Throws: ``SystemCallError`` from `socket`, `bind` (`EADDRINUSE`: another process
    ///   listens there; `EADDRNOTAVAIL`: not an address of this machine; `EACCES`: a privileged
    ///   port) or `listen`; nothing is left open.
    public static func bind(
        to address: SocketAddress, backlog: Int32 = 256, ipv6Only: Bool? = nil
    ) throws(SystemCallError) -> ListeningSocket {
        let socket = try TCPSocket.open(family: address.family)
        socket.setOption(level: SOL_SOCKET, SO_REUSEADDR, 1)
        if let ipv6Only, address.family == AF_INET6 {
            socket.setOption(level: Int32(IPPROTO_IPV6), IPV6_V6ONLY, ipv6Only ? 1 : 0)
        }
        guard address.withSockaddr({ Glibc.bind(socket.descriptor, $0, $1) }) == 0 else {
            let error = SystemCallError("bind", errno: errno)
            socket.close()
            throw error
        }
        guard listen(socket.descriptor, backlog) == 0 else {
            let error = SystemCallError("listen", errno: errno)
            socket.close()
            throw error
        }
        return ListeningSocket(descriptor: socket.descriptor)
    }

    /// The bound address (with the port the system chose for port 0).
    public var localAddress: SocketAddress? { TCPSocket.address(of: descriptor, getsockname) }

    /// What ``accept()`` found.
    public enum Accepted: Sendable, Hashable {
        /// A connection, already non-blocking and close-on-exec, with Nagle's delay off.
        case accepted(TCPSocket, peer: SocketAddress)
        /// No connection is waiting.
        case wouldBlock
        /// A connection was aborted before it was taken; try again.
        case aborted
        /// Accepting failed (out of descriptors or memory): stop polling the listener for a
        /// moment, since it stays readable.
        case failed(SystemCallError)
    }

    /// Takes one waiting connection.
    public func accept() -> Accepted {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let accepted = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.accept(descriptor, $0, &length) }
        }
        guard accepted >= 0 else {
            switch errno {
            case EAGAIN, EWOULDBLOCK, EINTR: return .wouldBlock
            case ECONNABORTED, EPROTO: return .aborted
            case let code: return .failed(SystemCallError("accept", errno: code))
            }
        }
        let flags = fcntl(accepted, F_GETFL)
        guard flags >= 0, fcntl(accepted, F_SETFL, flags | O_NONBLOCK) == 0, fcntl(accepted, F_SETFD, FD_CLOEXEC) == 0
        else {
            // Unusable, but the listener is fine: drop this one and take the next.
            _ = Glibc.close(accepted)
            return .aborted
        }
        let peer = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
        let socket = TCPSocket(descriptor: accepted)
        socket.setOption(level: Int32(IPPROTO_TCP), TCP_NODELAY, 1)
        return .accepted(socket, peer: peer)
    }

    /// Closes the listener. Call once.
    public func close() {
        _ = Glibc.close(descriptor)
    }
}
