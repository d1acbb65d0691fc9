import CastModel
internal import CMicroHTTPD
import SystemIO
import Synchronization

/// A static HTTP server for Cast devices: local media with the headers a receiver needs.
///
/// It serves the regular files of its mounted directories and any in-memory resources
/// published on it, answering the way a Cast receiver (a Chromium page) expects:
/// - a `Content-Type` for every media, playlist, caption and image type (``ServedContentTypes``);
/// - `Range` requests, single, open (`bytes=N-`) and suffix (`bytes=-N`), with 206 and an
///   exact `Content-Range`, 416 with `bytes */SIZE`, `If-Range`; multi-range requests are
///   answered 200 with the whole file (see ``ByteRangeRequest``);
/// - `HEAD`, and `OPTIONS` preflights with CORS headers per ``CORSPolicy`` on every response,
///   errors included;
/// - `ETag`/`Last-Modified` with 304 for `If-None-Match`/`If-Modified-Since`;
/// - no directory listing, no hidden files, nothing outside a mount (see the rules on
///   path safety in the module documentation);
/// - bounded connections in total and per address, an idle timeout and a header size limit.
///
/// libmicrohttpd runs the server on its own threads with epoll; request callbacks never touch
/// Swift's cooperative pool. Files are sent from their descriptors (`sendfile`), never read
/// into memory.
///
/// ```swift
/// let server = MediaServer(configuration: .init(mounts: [.init(urlPrefix: "/", directory: "Samples")], port: 0))
/// server.publish(path: "/captions/en.vtt", bytes: Array(webVTT.utf8))
/// let endpoint = try server.start()
/// print(endpoint.url(forPath: "big buck bunny.mp4"))   // http://192.168.1.20:40121/big%20buck%20bunny.mp4
/// defer { server.stop() }
/// ```
public final class MediaServer: Sendable {
    /// Where a started server can be reached.
    public struct Endpoint: Sendable, Hashable {
        /// The URL a Cast device should use, ending in `/`, e.g. `http://192.168.1.20:8000/`.
        public var baseURL: String
        /// The port listened on (useful after asking for port 0).
        public var port: UInt16
        /// The address listened on, e.g. `0.0.0.0`.
        public var boundAddress: String
        /// How the host in ``baseURL`` was chosen, with the alternatives.
        public var addressChoice: AddressChoice

        /// The URL of `path` (relative to the server root, unencoded), percent-encoding every
        /// byte outside RFC 3986's unreserved set and `/`.
        public func url(forPath path: String) -> String {
            let trimmed = path.drop { $0 == "/" }
            var encoded = ""
            for byte in trimmed.utf8 {
                let isUnreserved =
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "~")
                    || byte == UInt8(ascii: "/")
                encoded +=
                    isUnreserved
                    ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
            return baseURL + encoded
        }
    }

    /// The settings this server was created with.
    public let configuration: MediaServerConfiguration
    private let published = PublishedStore()
    private let running = Mutex<RunningDaemon?>(nil)

    /// Creates a stopped server; nothing is checked or opened until ``start()``.
    public init(configuration: MediaServerConfiguration) {
        self.configuration = configuration
    }

    deinit {
        stop()
    }

    // MARK: - Published resources

    /// Serves `bytes` at `path` (an unencoded URL path such as `/captions/en.vtt`) until it is
    /// replaced or withdrawn; takes precedence over files with the same path. Works before
    /// and after ``start()``.
    ///
    /// - Parameter contentType: sent as `Content-Type`; by default derived from the path's
    ///   extension with ``ServedContentTypes``.
    /// - Throws: `serve.path-invalid` for a path with `..` or hidden segments, which no request
    ///   could reach; `serve.content-type-invalid` for a content type that could not be a header.
    public func publish(path: String, bytes: [UInt8], contentType: String? = nil) throws(MediaServerError) {
        let key = try Self.publishedKey(path)
        if let contentType, contentType.isEmpty || contentType.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw MediaServerError(
                "serve.content-type-invalid", "the content type for '\(path)' is empty or holds control characters",
                fix: "pass a media type such as text/vtt; charset=utf-8, or nil to derive it from the extension")
        }
        let modified = Int64(time(nil))
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a: a cheap strong validator for the bytes
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        let resource = PublishedResource(
            bytes: bytes, contentType: contentType ?? ServedContentTypes.contentType(forFileName: path),
            modifiedSeconds: modified, entityTag: "\"m-\(String(hash, radix: 16))-\(String(bytes.count, radix: 16))\"")
        published.set(resource, at: key)
    }

    /// Stops serving the resource published at `path`.
    public func withdraw(path: String) {
        if let key = try? Self.publishedKey(path) { published.set(nil, at: key) }
    }

    private static func publishedKey(_ path: String) throws(MediaServerError) -> [UInt8] {
        guard path.hasPrefix("/"), case .success(let segments) = RequestPath.checkedSegments(Array(path.utf8)),
            !segments.isEmpty,
            !path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else {
            throw MediaServerError(
                "serve.path-invalid",
                "cannot publish at '\(path)': it must start with '/', name a file, and have no '.' or '..' or hidden segment",
                fix: "publish at a path such as /captions/en.vtt")
        }
        return RequestHandler.key(segments)
    }

    // MARK: - Running

    /// Whether the server is running.
    public var isRunning: Bool { endpoint != nil }

    /// Checks the mounts, listens, starts the server threads and returns where the server
    /// can be reached.
    ///
    /// - Throws: ``MediaServerError``: `serve.directory-missing`, `serve.mount-invalid`,
    ///   `serve.address-invalid`, `serve.listen-failed`, `serve.no-route`, `serve.start-failed`,
    ///   `serve.already-running`, or `serve.microhttpd-missing` when libmicrohttpd cannot be loaded.
    public func start() throws(MediaServerError) -> Endpoint {
        try running.withLock { (daemon: inout RunningDaemon?) throws(MediaServerError) -> Endpoint in
            switch daemon {
            case .some(let current):
                throw MediaServerError(
                    "serve.already-running", "the server already runs at \(current.endpoint.baseURL)",
                    fix: "stop it first, or use the running endpoint")
            case .none:
                break
            }
            let started = try RunningDaemon(configuration: configuration, published: published)
            let endpoint = started.endpoint
            daemon = consume started
            return endpoint
        }
    }

    /// The endpoint of the running server, or nil when stopped.
    public var endpoint: Endpoint? {
        running.withLock { daemon in
            switch daemon {
            case .some(let current): current.endpoint
            case .none: nil
            }
        }
    }

    /// How many connections are open now (0 when stopped).
    public var openConnections: Int {
        running.withLock { daemon in
            switch daemon {
            case .some(let current): Int(castprep_MHD_current_connections(current.daemon))
            case .none: 0
            }
        }
    }

    /// Loads libmicrohttpd (and its TLS dependencies) now, if it is not loaded yet, so a
    /// server started later does not wait for it. Blocks for a few milliseconds: call it off
    /// the cooperative pool, on a core that is otherwise idle. A missing library is reported
    /// by ``start()``, not here.
    public static func loadLibrary() {
        _ = castprep_microhttpd_load_error()
    }

    /// Closes every connection and stops the server threads. Blocks until they have ended,
    /// which takes milliseconds; call it off the cooperative pool in async code.
    public func stop() {
        let daemon = running.withLock { $0.take() }
        daemon?.shutdown()
    }
}

/// A started libmicrohttpd daemon and the context its callbacks read.
private struct RunningDaemon: ~Copyable {
    let daemon: OpaquePointer
    let context: Unmanaged<DaemonContext>
    let endpoint: MediaServer.Endpoint

    init(configuration: MediaServerConfiguration, published: PublishedStore) throws(MediaServerError) {
        // libmicrohttpd is loaded here, the first time a server starts (CMicroHTTPD.h says why).
        if let error = castprep_microhttpd_load_error() { throw .libraryMissing(String(cString: error)) }
        var mounts: [ResolvedMount] = []
        for mount in configuration.mounts {
            guard mount.urlPrefix.hasPrefix("/"),
                case .success(let prefix) = RequestPath.checkedSegments(Array(mount.urlPrefix.utf8))
            else {
                throw .badMount(mount.urlPrefix)
            }
            guard let root = RequestPath.realPath(Array(mount.directory.utf8)) else {
                throw .directoryMissing(mount.directory, reason: "it does not exist or cannot be read")
            }
            guard ContainedPath.isDirectory(root) else {
                throw .directoryMissing(mount.directory, reason: "it is not a directory")
            }
            mounts.append(ResolvedMount(prefix: prefix, root: root))
        }
        // Listen on every IPv4 interface by default; on every interface when the device has an
        // IPv6 address, since the URL will then name an IPv6 source address.
        let bindText =
            configuration.bindAddress ?? (configuration.reachableFrom?.contains(":") == true ? "::" : "0.0.0.0")
        guard let bindAddress = HostLiteral.socketAddress(bindText, port: configuration.port) else {
            throw .badAddress(bindText, role: "bind")
        }
        let choice = try LANAddress.choose(
            advertised: configuration.advertisedHost, boundTo: configuration.bindAddress,
            reachableFrom: configuration.reachableFrom)

        var handler = RequestHandler(mounts: mounts, published: published, cors: configuration.cors)
        handler.publication = configuration.publishedFiles.map(ResolvedPublication.init)
        if let token = configuration.pathToken {
            guard PathToken.isValid(token) else {
                throw MediaServerError(
                    "serve.token-invalid", "the path token must be 1 to 128 letters, digits, '-' or '_'",
                    fix: "leave the token out to have a random one made")
            }
            handler.token = Array(token.utf8)
        }
        let limits = configuration.limits
        let listener = try Self.listen(
            on: bindAddress, text: bindText, port: configuration.port, backlog: limits.listenBacklog)
        let context = Unmanaged.passRetained(
            DaemonContext(
                handler: handler, log: configuration.requestLog, clients: configuration.allowedClients,
                headerTimeout: UInt32(clamping: max(1, min(limits.headerTimeoutSeconds, limits.idleTimeoutSeconds))),
                idleTimeout: UInt32(clamping: max(1, limits.idleTimeoutSeconds))))
        var flags = MHD_USE_AUTO_INTERNAL_THREAD.rawValue | MHD_USE_ITC.rawValue
        if bindAddress.isIPv6 { flags |= MHD_USE_IPv6.rawValue }
        guard
            let daemon = castprep_MHD_start_daemon_on_socket(
                flags, listener.socket.descriptor, daemonAccessHandler, context.toOpaque(), keepPathEscaped, nil,
                connectionNotice, context.toOpaque(),
                UInt32(clamping: max(1, limits.maximumConnections)),
                UInt32(clamping: max(0, limits.maximumConnectionsPerAddress)),
                UInt32(clamping: max(1, limits.idleTimeoutSeconds)), max(4096, limits.connectionMemoryBytes),
                UInt32(clamping: max(1, limits.threads)))
        else {
            listener.socket.close()
            context.release()
            throw MediaServerError(
                "serve.start-failed", "libmicrohttpd could not start the server on \(bindText) port \(listener.port)",
                fix: "check the limits (threads, connections) and that the system allows more threads and files")
        }
        self.daemon = daemon
        self.context = context
        let urlHost = HostLiteral.urlHost(choice.host)
        let path = configuration.pathToken.map { "/\($0)/" } ?? "/"
        endpoint = MediaServer.Endpoint(
            baseURL: "http://\(urlHost):\(listener.port)\(path)", port: listener.port,
            boundAddress: bindText, addressChoice: choice)
    }

    /// Stops the daemon (which closes the listening socket) and frees the callback context.
    consuming func shutdown() {
        castprep_MHD_stop_daemon(daemon)
        context.release()
    }

    /// Opens, binds and listens on a TCP socket, so every failure has its own errno. `::`
    /// serves IPv4 too, so one wildcard bind covers both families. A short queue: connections
    /// the server cannot take soon are refused at once (the client retries) instead of waiting
    /// behind a burst the kernel would keep for minutes.
    private static func listen(on address: SocketAddress, text: String, port: UInt16, backlog: Int)
        throws(MediaServerError) -> (socket: ListeningSocket, port: UInt16)
    {
        let socket: ListeningSocket
        do {
            socket = try ListeningSocket.bind(to: address, backlog: Int32(clamping: max(1, backlog)), ipv6Only: false)
        } catch {
            throw .listenFailed(text, port: port, error)
        }
        return (socket, socket.localAddress.map { UInt16(truncatingIfNeeded: $0.port) } ?? port)
    }
}

/// What the C callbacks need, kept alive by the running daemon.
final class DaemonContext: Sendable {
    let handler: RequestHandler
    let log: (@Sendable (RequestLogEntry) -> Void)?
    /// The clients answered; nil for everyone.
    let clients: ClientAllowList?
    /// Seconds a connection has for its first request's headers, then between requests.
    let headerTimeout: UInt32
    let idleTimeout: UInt32

    init(
        handler: RequestHandler, log: (@Sendable (RequestLogEntry) -> Void)?, clients: ClientAllowList?,
        headerTimeout: UInt32, idleTimeout: UInt32
    ) {
        self.handler = handler
        self.log = log
        self.clients = clients
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
    }
}

// MARK: - libmicrohttpd callbacks (run on the daemon's threads)

/// Leaves the request path exactly as received, so ``RequestPath`` decodes it once and sees
/// an encoded NUL instead of a path silently cut short at it.
private let keepPathEscaped:
    @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafeMutablePointer<CChar>?) -> Int = { _, _, text in
        guard let text else { return 0 }
        var length = 0
        while text[length] != 0 { length += 1 }
        return length
    }

/// Gives each new connection the header deadline: until its first request's headers are in,
/// it is closed after ``DaemonContext/headerTimeout`` seconds without progress rather than
/// the longer idle timeout, so a burst of connections that send a byte and stop (or whose
/// peers are gone) frees its places quickly.
private let connectionNotice: MHD_NotifyConnectionCallback = { context, connection, _, code in
    guard let context, let connection, castprep_MHD_is_connection_start(code) != 0 else { return }
    let server = Unmanaged<DaemonContext>.fromOpaque(context).takeUnretainedValue()
    castprep_MHD_set_connection_timeout(connection, server.headerTimeout)
    let socket = castprep_MHD_connection_socket(connection)
    // libmicrohttpd reads what arrived with the connection and then waits for more, so a peer
    // that sent part of a request and closed before it was accepted would hold its place
    // until the timeout. Shutting the socket down makes the library see the end at once.
    if socket >= 0, AbandonedConnection.isAbandoned(TCPSocket(descriptor: socket)) {
        TCPSocket(descriptor: socket).shutdownBoth()
    }
}

/// Whether the NUL-terminated `text` is exactly `expected`, compared in place.
private func cString(_ text: UnsafePointer<CChar>, is expected: StaticString) -> Bool {
    let bytes = UnsafeBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount)
    for (offset, byte) in bytes.enumerated() where UInt8(bitPattern: text[offset]) != byte { return false }
    return text[bytes.count] == 0
}

/// Tells a connection whose peer has stopped sending before its request was complete.
enum AbandonedConnection {
    /// Whether the peer of `socket` has shut down its side (or reset) without having sent a
    /// whole request head: such a request can never complete. A peer that sent a full request
    /// and then shut down writing (`nc -N`, some HTTP/1.0 clients) still gets its answer.
    static func isAbandoned(_ socket: TCPSocket) -> Bool {
        switch socket.peerState {
        case .open: return false
        case .broken: return true
        case .closedWriting: break
        }
        // What arrived before the end: abandoned unless it holds the blank line ending a head.
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16 * 1024) { buffer in
            let count = socket.peek(into: UnsafeMutableRawBufferPointer(buffer))
            guard count > 0 else { return count == 0 }
            let received = UnsafeBufferPointer(rebasing: buffer[..<count])
            let ending: [UInt8] = [13, 10, 13, 10]
            return received.count < 4
                || !(0...(received.count - 4)).contains { offset in
                    received[offset] == ending[0] && received[offset + 1] == ending[1]
                        && received[offset + 2] == ending[2]
                        && received[offset + 3] == ending[3]
                }
        }
    }
}

/// Answers each request once it has been read in full, so the connection stays open for the
/// next request (a receiver fetches segment after segment). A request that carries a body, or
/// uses a method this server does not implement, is answered at once instead: libmicrohttpd
/// then discards the body and closes that connection, so nobody can make it read one.
private let daemonAccessHandler: MHD_AccessHandlerCallback = {
    context, connection, url, method, _, _, uploadSize, requestState in
    guard let context, let connection, let url, let method, let requestState else { return .NO }
    if requestState.pointee == nil {
        // First call: the headers are in. Mark the request as seen and wait for the end of it,
        // unless waiting would mean reading a body.
        let hasBody =
            castprep_MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length").map {
                !cString($0, is: "0")
            } ?? false
            || castprep_MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") != nil
        let isKnownMethod = cString(method, is: "GET") || cString(method, is: "HEAD") || cString(method, is: "OPTIONS")
        // The headers are in: from now on the connection has the idle timeout.
        let server = Unmanaged<DaemonContext>.fromOpaque(context).takeUnretainedValue()
        if server.headerTimeout != server.idleTimeout {
            castprep_MHD_set_connection_timeout(connection, server.idleTimeout)
        }
        if !hasBody && isKnownMethod {
            requestState.pointee = context
            return .YES
        }
    } else if let uploadSize, uploadSize.pointee != 0 {
        uploadSize.pointee = 0  // not reached: requests with a body are answered on the first call
        return .YES
    }
    let server = Unmanaged<DaemonContext>.fromOpaque(context).takeUnretainedValue()
    let request = RequestHead(
        method: String(cString: method),
        target: String(cString: url)
    ) { header in
        header.name.withCString { castprep_MHD_lookup_connection_value(connection, .HEADER_KIND, $0) }.map { value in
            String(cString: value)
        }
    }
    let plan: ResponsePlan
    if let clients = server.clients,
        !clients.permits(castprep_MHD_client_address(connection).flatMap { SocketAddress(copyingSockaddrAt: $0) })
    {
        plan = ResponsePlan(
            status: 403, headers: server.handler.cors.responseHeaders(origin: request[.origin]), body: .none)
    } else {
        plan = server.handler.respond(to: request)
    }

    let response: OpaquePointer?
    switch plan.body {
    case .none:
        response = castprep_MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
    case .file(let descriptor, let offset, let length):
        if length == 0 {
            ContainedPath.close(descriptor)
            response = castprep_MHD_create_response_from_buffer(0, nil, .RESPMEM_PERSISTENT)
        } else {
            // libmicrohttpd owns the descriptor from here and closes it with the response.
            response = castprep_MHD_create_response_from_fd_at_offset64(length, descriptor, offset)
            if response == nil { ContainedPath.close(descriptor) }
        }
    case .bytes(let bytes, let offset, let length):
        response = bytes.withUnsafeBytes { buffer in
            castprep_MHD_create_response_from_buffer(
                length, UnsafeMutableRawPointer(mutating: buffer.baseAddress.map { $0 + offset }),
                .RESPMEM_MUST_COPY)
        }
    case .lengthOnly(let length):
        response = castprep_MHD_create_response_without_body(length)
    }
    guard let response else { return .NO }
    defer { castprep_MHD_destroy_response(response) }
    for (name, value) in plan.headers {
        // withCString hands over short strings from the stack; passing a String where a C
        // string is expected would copy each into a new array.
        _ = name.withCString { name in
            value.withCString { value in castprep_MHD_add_response_header(response, name, value) }
        }
    }
    let queued = castprep_MHD_queue_response(connection, UInt32(plan.status), response)
    if let log = server.log {
        let client =
            castprep_MHD_client_address(connection).flatMap { SocketAddress(copyingSockaddrAt: $0)?.host } ?? "?"
        log(
            RequestLogEntry(
                client: client, method: request.method, target: request.target, status: plan.status,
                bytes: request.method == "HEAD" ? 0 : plan.contentLength, range: request[.range],
                origin: request[.origin]))
    }
    return queued
}
