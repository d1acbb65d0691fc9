import Glibc

/// Turns a host into every TCP address it has, off any loop.
///
/// `getaddrinfo` blocks for as long as the DNS server (or mDNS, through nsswitch) takes, so
/// names are looked up on ``BlockingWork``'s queue, never on a reactor's thread or Swift's
/// cooperative pool; a numeric host (`192.168.1.20`, `::1`) is parsed at once without a
/// lookup. Every address is returned, in the resolver's order (RFC 6724: usually IPv6 first
/// when it is routable), without duplicates and at most ``maximumAddresses``, so a caller can
/// try each in turn instead of only the first.
///
/// ```swift
/// let addresses = try await AddressResolver.resolve(host: "living-room.local", port: 8009)
/// // from a loop thread: the answer comes back on the resolver's thread; post it to the loop
/// AddressResolver.resolve(host: name, port: 8009) { result in mailbox.post(.resolved(result)) }
/// ```
public enum AddressResolver {
    /// The most addresses kept for one name; a name with more is cut (a device has a few).
    public static let maximumAddresses = 16
    /// The longest host name looked up (RFC 1035: 253 characters in text form).
    public static let maximumNameLength = 253

    /// The addresses of a numeric host, or nil when `host` is a name (or not a valid host).
    /// Never blocks. Brackets around an IPv6 literal (`[::1]`) are accepted.
    public static func numericAddresses(host: String, port: Int) -> [SocketAddress]? {
        try? lookUp(host: host, port: port, numericOnly: true)
    }

    /// Every address of `host`, looked up on ``BlockingWork``'s queue.
    ///
    /// - Throws: ``ResolveError`` when the name does not resolve, has no TCP address, or is
    ///   not a valid host name.
    public static func resolve(host: String, port: Int) async throws(ResolveError) -> [SocketAddress] {
        if let numeric = numericAddresses(host: host, port: port) { return numeric }
        let result = try? await BlockingWork.run { () -> Result<[SocketAddress], ResolveError> in
            Result { () throws(ResolveError) in try lookUp(host: host, port: port, numericOnly: false) }
        }
        guard let result else { throw ResolveError(host: host, reason: "the lookup could not run") }
        return try result.get()
    }

    /// Looks `host` up on ``BlockingWork``'s queue and calls `completion` there with the result:
    /// for a loop thread, which posts the answer to its own mailbox and never waits. A numeric
    /// host is answered before this returns, on the caller's thread.
    public static func resolve(
        host: String, port: Int, completion: @escaping @Sendable (Result<[SocketAddress], ResolveError>) -> Void
    ) {
        if let numeric = numericAddresses(host: host, port: port) {
            completion(.success(numeric))
            return
        }
        BlockingWork.start {
            completion(Result { () throws(ResolveError) in try lookUp(host: host, port: port, numericOnly: false) })
        }
    }

    /// Every address of `host`, looked up on the calling thread.
    ///
    /// - Warning: Blocks for as long as the resolver takes: call it only on a thread that may
    ///   wait (a ``BlockingWork`` closure, a library's own queue), never on a loop or a task.
    /// - Throws: ``ResolveError``.
    public static func lookUpBlocking(host: String, port: Int) throws(ResolveError) -> [SocketAddress] {
        try lookUp(host: host, port: port, numericOnly: false)
    }

    private static func lookUp(host: String, port: Int, numericOnly: Bool) throws(ResolveError) -> [SocketAddress] {
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard !name.isEmpty, name.utf8.count <= maximumNameLength, !name.utf8.contains(0) else {
            throw ResolveError(
                host: host, reason: "not a host name (empty, over \(maximumNameLength) bytes, or with a NUL byte)")
        }
        guard (0...65535).contains(port) else {
            throw ResolveError(host: host, reason: "port \(port) is not a TCP port")
        }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = numericOnly ? (AI_NUMERICHOST | AI_NUMERICSERV) : AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(name, String(port), &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0 else {
            let reason =
                status == EAI_SYSTEM
                ? SystemCallError("getaddrinfo", errno: errno).reason : String(cString: gai_strerror(status))
            throw ResolveError(host: host, reason: reason, status: status)
        }
        var addresses: [SocketAddress] = []
        var cursor = list
        while let entry = cursor, addresses.count < maximumAddresses {
            if let address = entry.pointee.ai_addr,
                entry.pointee.ai_family == AF_INET || entry.pointee.ai_family == AF_INET6
            {
                let candidate = SocketAddress(address, length: entry.pointee.ai_addrlen)
                if !addresses.contains(candidate) { addresses.append(candidate) }
            }
            cursor = entry.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw ResolveError(host: host, reason: "the name has no IPv4 or IPv6 address") }
        return addresses
    }
}

/// A host that did not resolve, with the resolver's reason.
public struct ResolveError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The host as asked.
    public let host: String
    /// The resolver's text (`Name or service not known`) or why the host was refused.
    public let reason: String
    /// `getaddrinfo`'s status (`EAI_NONAME`…), or 0 when the host was refused before a lookup.
    public let status: Int32

    public init(host: String, reason: String, status: Int32 = 0) {
        self.host = host
        self.reason = reason
        self.status = status
    }

    public var description: String { "cannot resolve \"\(host)\": \(reason)" }
}
