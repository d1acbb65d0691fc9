import Glibc

/// A socket address kept as bytes (a `sockaddr_in` or `sockaddr_in6`), so it can cross threads.
struct SocketAddress: Sendable, Hashable {
    let bytes: [UInt8]
    let family: Int32

    init(_ pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        bytes = Array(UnsafeRawBufferPointer(start: pointer, count: Int(length)))
        family = Int32(pointer.pointee.sa_family)
    }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
        bytes.withUnsafeBytes { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
    }

    /// The numeric host and port.
    var peerAddress: ChannelPeerAddress {
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyBytes(from: bytes.prefix(target.count))
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var port = 0
        withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                    var raw = address.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &raw, &text, socklen_t(text.count))
                    port = Int(UInt16(bigEndian: address.pointee.sin6_port))
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                    var raw = address.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
                    port = Int(UInt16(bigEndian: address.pointee.sin_port))
                }
            }
        }
        return ChannelPeerAddress(host: String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self), port: port)
    }
}

/// Thin wrappers over the socket calls the event loop and the server make.
enum Sockets {
    /// The addresses of a numeric host (`127.0.0.1`, `::1`), or nil when `host` is a name that
    /// needs a (blocking) resolver.
    static func numericAddresses(host: String, port: Int) -> [SocketAddress]? {
        try? lookUp(host: host, port: port, numericOnly: true).get()
    }

    /// Resolves a host name. Blocks: call it only on a thread of its own.
    static func resolve(host: String, port: Int) -> Result<[SocketAddress], ChannelError> {
        lookUp(host: host, port: port, numericOnly: false)
    }

    private static func lookUp(host: String, port: Int, numericOnly: Bool) -> Result<[SocketAddress], ChannelError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = numericOnly ? (AI_NUMERICHOST | AI_NUMERICSERV) : AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else {
            return .failure(
                ChannelError(
                    ChannelError.Code.resolveFailed, "cannot resolve \"\(host)\": \(String(cString: gai_strerror(status)))",
                    fix: "use the device's IP address as discovery reports it, or check the name"))
        }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor {
            if let address = entry.pointee.ai_addr, addresses.count < 16 {
                let candidate = SocketAddress(address, length: entry.pointee.ai_addrlen)
                if !addresses.contains(candidate) { addresses.append(candidate) }
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            return .failure(
                ChannelError(
                    ChannelError.Code.resolveFailed, "\"\(host)\" has no addresses", fix: "use the device's IP address"))
        }
        return .success(addresses)
    }

    /// The text of an errno value.
    static func describe(errno code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return "\(String(cString: text)) (errno \(code))"
    }

    /// Sets `O_NONBLOCK` and `FD_CLOEXEC`.
    static func makeNonBlocking(_ descriptor: Int32) -> Bool {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else { return false }
        return fcntl(descriptor, F_SETFD, FD_CLOEXEC) == 0
    }

    static func setOption(_ descriptor: Int32, level: Int32, _ option: Int32, _ value: Int32 = 1) {
        var value = value
        _ = setsockopt(descriptor, level, option, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A new non-blocking, close-on-exec TCP socket, or -1 with `errno` set.
    static func tcpSocket(family: Int32) -> Int32 {
        socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    }

    /// The address bound to a socket.
    static func localAddress(of descriptor: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        guard status == 0 else { return nil }
        return withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
    }
}
