/// Everything a ``MediaServer`` needs to know before it starts.
///
/// ```swift
/// var configuration = MediaServerConfiguration(mounts: [.init(urlPrefix: "/", directory: "Samples")])
/// configuration.mounts.append(.init(urlPrefix: "/captions", directory: "out/captions"))
/// configuration.port = 0                          // any free port
/// configuration.reachableFrom = "192.168.1.50"    // advertise the address that device reaches
/// ```
public struct MediaServerConfiguration: Sendable {
    /// A directory served under a URL prefix.
    public struct Mount: Sendable, Hashable {
        /// The URL path prefix, such as `/` or `/captions`; matched whole segments at a time.
        public var urlPrefix: String
        /// The directory whose regular files are served. Nothing outside it is reachable:
        /// not through `..`, encoded or not, and not through symbolic links leading out.
        public var directory: String

        /// Creates a mount.
        public init(urlPrefix: String, directory: String) {
            self.urlPrefix = urlPrefix
            self.directory = directory
        }
    }

    /// Bounds that keep a misbehaving or hostile client from exhausting the server.
    public struct Limits: Sendable, Hashable {
        /// Connections held open at once, from everyone. A Cast device opens a handful.
        public var maximumConnections: Int
        /// Connections held open at once from one IP address, so one client cannot take
        /// them all (0 = no per-address limit).
        public var maximumConnectionsPerAddress: Int
        /// Seconds a connection may stay silent before it is closed; bounds stalled clients.
        public var idleTimeoutSeconds: Int
        /// Memory per connection in bytes; the request line plus headers must fit in about
        /// half of it, so this is also the header size limit (larger requests get 431).
        public var connectionMemoryBytes: Int
        /// Threads answering requests; each serves many connections with epoll.
        public var threads: Int
        /// Seconds a new connection has to send its first request's headers in full; a
        /// connection that sends a byte and goes quiet (or whose peer is gone) is closed
        /// then instead of holding its place for the idle timeout.
        public var headerTimeoutSeconds: Int
        /// The kernel's queue of connections not yet accepted (`listen` backlog).
        public var listenBacklog: Int

        /// Creates limits; the defaults suit one household of Cast devices.
        public init(
            maximumConnections: Int = 256, maximumConnectionsPerAddress: Int = 64, idleTimeoutSeconds: Int = 30,
            connectionMemoryBytes: Int = 32 * 1024, threads: Int = 2, headerTimeoutSeconds: Int = 10,
            listenBacklog: Int = 128
        ) {
            self.maximumConnections = maximumConnections
            self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
            self.idleTimeoutSeconds = idleTimeoutSeconds
            self.connectionMemoryBytes = connectionMemoryBytes
            self.threads = threads
            self.headerTimeoutSeconds = headerTimeoutSeconds
            self.listenBacklog = listenBacklog
        }
    }

    /// Directories served, by URL prefix; the longest matching prefix wins.
    public var mounts: [Mount]
    /// The local address to listen on (an IPv4 or IPv6 literal); nil listens on every IPv4
    /// interface (`0.0.0.0`). `::` listens on every interface, IPv4 included.
    public var bindAddress: String?
    /// The TCP port; 0 picks a free one (read it from ``MediaServer/Endpoint/port``).
    public var port: UInt16
    /// Who may read the media from script.
    public var cors: CORSPolicy
    /// Connection, time and size bounds.
    public var limits: Limits
    /// The address of the Cast device that will fetch the media, if known: the base URL then
    /// uses the local address the kernel routes to it from.
    public var reachableFrom: String?
    /// A host name or address to put in the base URL instead of choosing one.
    public var advertisedHost: String?
    /// Called once per answered request, on a server thread; keep it quick.
    public var requestLog: (@Sendable (RequestLogEntry) -> Void)?
    /// The files the mounts publish; nil publishes every regular, non-hidden file below them.
    /// Published in-memory resources are not affected.
    public var publishedFiles: PublishedFiles?
    /// A secret first path segment (see ``PathToken``): every request must start with
    /// `/TOKEN/`, and ``MediaServer/Endpoint/baseURL`` ends with it; other requests get 404.
    public var pathToken: String?
    /// The clients answered; others get 403. nil answers every client.
    public var allowedClients: ClientAllowList?

    /// Creates a configuration serving `mounts`; every other setting has a safe default.
    public init(
        mounts: [Mount] = [], bindAddress: String? = nil, port: UInt16 = 8000, cors: CORSPolicy = CORSPolicy(),
        limits: Limits = Limits(), reachableFrom: String? = nil, advertisedHost: String? = nil,
        requestLog: (@Sendable (RequestLogEntry) -> Void)? = nil, publishedFiles: PublishedFiles? = nil,
        pathToken: String? = nil, allowedClients: ClientAllowList? = nil
    ) {
        self.publishedFiles = publishedFiles
        self.pathToken = pathToken
        self.allowedClients = allowedClients
        self.mounts = mounts
        self.bindAddress = bindAddress
        self.port = port
        self.cors = cors
        self.limits = limits
        self.reachableFrom = reachableFrom
        self.advertisedHost = advertisedHost
        self.requestLog = requestLog
    }
}

/// One answered request, for logs.
public struct RequestLogEntry: Sendable, Hashable, CustomStringConvertible {
    /// The client's address, e.g. `192.168.1.50`.
    public var client: String
    /// The request method.
    public var method: String
    /// The request path as received (still percent-encoded), without the query.
    public var target: String
    /// The status sent.
    public var status: Int
    /// Body bytes the response carries (0 for HEAD).
    public var bytes: UInt64
    /// The `Range` header, when there was one.
    public var range: String?
    /// The `Origin` header, when there was one.
    public var origin: String?

    /// `192.168.1.50 "GET /movie.mp4" 206 2 bytes range=bytes=0-1 origin=https://www.gstatic.com`
    public var description: String {
        var text = ""
        text.reserveCapacity(
            client.utf8.count + method.utf8.count + target.utf8.count + (range?.utf8.count ?? 0)
                + (origin?.utf8.count ?? 0) + 64)
        text += client
        text += " \""
        text += method
        text += " "
        Self.appendPrintable(target, to: &text)
        text += "\" "
        text += String(status)
        text += " "
        text += String(bytes)
        text += " bytes"
        if let range {
            text += " range="
            Self.appendPrintable(range, to: &text)
        }
        if let origin {
            text += " origin="
            Self.appendPrintable(origin, to: &text)
        }
        return text
    }

    /// The most characters of one field written to the log.
    static let maximumPrintedScalars = 512

    /// Log text with control characters escaped, so a hostile request cannot forge log lines.
    static func printable(_ text: String) -> String {
        var result = ""
        appendPrintable(text, to: &result)
        return result
    }

    /// Appends `text` (its first 512 characters) to `result` with control characters, `"` and
    /// `\` escaped as `\xNN`. Text that needs no escape, the usual case, is appended whole.
    static func appendPrintable(_ text: String, to result: inout String) {
        let bytes = text.utf8
        if bytes.count <= maximumPrintedScalars,
            !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") })
        {
            result += text
            return
        }
        for scalar in text.unicodeScalars.prefix(maximumPrintedScalars) {
            if scalar.value < 0x20 || scalar.value == 0x7F || scalar == "\"" || scalar == "\\" {
                result += "\\x" + String(scalar.value, radix: 16, uppercase: false).leftPadded(to: 2)
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
    }
}

extension String {
    func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
