import Glibc

/// One HTTP/1.1 response, read up to a byte limit.
struct HTTPResponse {
    var status: Int
    /// Header names lower-cased; repeated headers joined with ", ".
    var headers: [String: String]
    /// The body, or its first `maxBodyBytes` bytes.
    var body: [UInt8]
    /// Whether the body was cut at the limit.
    var isTruncated: Bool

    func header(_ name: String) -> String? { headers[name.lowercased()] }
}

/// Why a request got no usable response.
struct HTTPFailure: Error {
    var message: String
}

/// A minimal blocking HTTP/1.1 client on POSIX sockets, for plain `http://` only.
///
/// - Warning: Every call blocks its thread (DNS, connect, reads); run it on a thread of its
///   own, never on Swift's cooperative pool. Each step is bounded by `timeout`, headers by
///   64 KiB, bodies by `maxBodyBytes`, so a hostile or stalled server cannot hang or bloat
///   the caller.
struct BlockingHTTPClient {
    /// The limit for each of connect, send and every read.
    var timeout: Duration = .seconds(5)
    static let maxHeaderBytes = 65_536

    func get(_ url: HTTPURL, headers: [(String, String)], maxBodyBytes: Int, method: String = "GET") throws(HTTPFailure) -> HTTPResponse {
        guard url.scheme == "http" else { throw HTTPFailure(message: "\(url.scheme) is not fetched by this client") }
        let socket = try connect(to: url)
        defer { close(socket) }
        var request = "\(method) \(url.target) HTTP/1.1\r\nHost: \(url.hostHeader)\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        request += "Connection: close\r\n\r\n"
        try send(Array(request.utf8), on: socket)
        var reader = SocketReader(socket: socket, timeoutMilliseconds: Int32(clamping: timeout.components.seconds * 1000 + 1))
        let head = try reader.readHead(limit: Self.maxHeaderBytes)
        var response = try Self.parseHead(head)
        let noBody = method == "HEAD" || response.status == 204 || response.status == 304 || (100..<200).contains(response.status)
        if noBody { return response }
        if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            (response.body, response.isTruncated) = try reader.readChunked(limit: maxBodyBytes)
        } else if let lengthText = response.header("content-length"), let length = Int(lengthText.stripping(" ")), length >= 0 {
            (response.body, response.isTruncated) = try reader.read(count: min(length, maxBodyBytes))
            response.isTruncated = response.isTruncated || length > maxBodyBytes
        } else {
            (response.body, response.isTruncated) = try reader.readToEnd(limit: maxBodyBytes)
        }
        return response
    }

    // MARK: - Connecting

    private func connect(to url: HTTPURL) throws(HTTPFailure) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(url.host, String(url.port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPFailure(message: "cannot resolve \(url.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = "no address"
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let address = entry {
            entry = address.pointee.ai_next
            let socket = Glibc.socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard socket >= 0 else {
                lastError = "socket: \(String(cString: strerror(errno)))"
                continue
            }
            _ = fcntl(socket, F_SETFL, fcntl(socket, F_GETFL) | O_NONBLOCK)
            let result = Glibc.connect(socket, address.pointee.ai_addr, address.pointee.ai_addrlen)
            if result == 0 || errno == EINPROGRESS {
                var poller = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
                let ready = poll(&poller, 1, Int32(clamping: timeout.components.seconds * 1000 + 1))
                var socketError: Int32 = 0
                var length = socklen_t(MemoryLayout<Int32>.size)
                getsockopt(socket, SOL_SOCKET, SO_ERROR, &socketError, &length)
                if ready == 1, socketError == 0 { return socket }
                lastError = ready == 0 ? "connect timed out after \(timeout)" : String(cString: strerror(socketError == 0 ? errno : socketError))
            } else {
                lastError = String(cString: strerror(errno))
            }
            close(socket)
        }
        throw HTTPFailure(message: "cannot connect to \(url.hostHeader): \(lastError)")
    }

    private func send(_ bytes: [UInt8], on socket: Int32) throws(HTTPFailure) {
        var offset = 0
        while offset < bytes.count {
            var poller = pollfd(fd: socket, events: Int16(POLLOUT), revents: 0)
            guard poll(&poller, 1, Int32(clamping: timeout.components.seconds * 1000 + 1)) == 1 else {
                throw HTTPFailure(message: "sending the request timed out")
            }
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 {
                if errno == EAGAIN || errno == EINTR { continue }
                throw HTTPFailure(message: "sending the request failed: \(String(cString: strerror(errno)))")
            }
            offset += sent
        }
    }

    // MARK: - Parsing

    static func parseHead(_ head: [UInt8]) throws(HTTPFailure) -> HTTPResponse {
        let text = String(decoding: head, as: UTF8.self)
        var lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/") else {
            throw HTTPFailure(message: "the server did not answer HTTP")
        }
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]), (100...599).contains(status) else {
            throw HTTPFailure(message: "malformed status line \"\(statusLine.prefix(80))\"")
        }
        lines.removeFirst()
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].stripping(" \t")
            headers[name] = headers[name].map { "\($0), \(value)" } ?? value
        }
        return HTTPResponse(status: status, headers: headers, body: [], isTruncated: false)
    }
}

/// Buffered, deadline-bounded reads from a non-blocking socket.
struct SocketReader {
    let socket: Int32
    let timeoutMilliseconds: Int32
    private var buffer: [UInt8] = []
    private var isAtEnd = false

    init(socket: Int32, timeoutMilliseconds: Int32) {
        self.socket = socket
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Reads more bytes into the buffer; false at end of stream.
    private mutating func fill() throws(HTTPFailure) -> Bool {
        if isAtEnd { return false }
        var poller = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, timeoutMilliseconds)
        if ready == 0 { throw HTTPFailure(message: "the server stopped answering (no data for \(timeoutMilliseconds / 1000) s)") }
        if ready < 0 {
            if errno == EINTR { return true }
            throw HTTPFailure(message: "poll failed: \(String(cString: strerror(errno)))")
        }
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EAGAIN || errno == EINTR { return true }
            throw HTTPFailure(message: "reading failed: \(String(cString: strerror(errno)))")
        }
        if count == 0 {
            isAtEnd = true
            return false
        }
        buffer.append(contentsOf: chunk[..<count])
        return true
    }

    /// The status line and headers, without the blank line.
    mutating func readHead(limit: Int) throws(HTTPFailure) -> [UInt8] {
        while true {
            if let end = Self.find([13, 10, 13, 10], in: buffer) {
                let head = Array(buffer[..<end])
                buffer.removeFirst(end + 4)
                return head
            }
            if buffer.count > limit { throw HTTPFailure(message: "the response headers exceed \(limit) bytes") }
            guard try fill() else { throw HTTPFailure(message: "the connection closed before the response headers ended") }
        }
    }

    /// Exactly `count` bytes, or what arrived before the end (truncated = true).
    mutating func read(count: Int) throws(HTTPFailure) -> ([UInt8], Bool) {
        while buffer.count < count {
            guard try fill() else { return (buffer, true) }
        }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return (bytes, false)
    }

    mutating func readToEnd(limit: Int) throws(HTTPFailure) -> ([UInt8], Bool) {
        while buffer.count <= limit {
            guard try fill() else { return (buffer, false) }
        }
        return (Array(buffer[..<limit]), true)
    }

    mutating func readLine(limit: Int) throws(HTTPFailure) -> String {
        while true {
            if let end = Self.find([13, 10], in: buffer) {
                let line = String(decoding: buffer[..<end], as: UTF8.self)
                buffer.removeFirst(end + 2)
                return line
            }
            if buffer.count > limit { throw HTTPFailure(message: "a chunk header exceeds \(limit) bytes") }
            guard try fill() else { throw HTTPFailure(message: "the connection closed inside a chunked body") }
        }
    }

    mutating func readChunked(limit: Int) throws(HTTPFailure) -> ([UInt8], Bool) {
        var body: [UInt8] = []
        while true {
            let sizeLine = try readLine(limit: 1024)
            let sizeText = sizeLine.split(separator: ";").first.map { $0.stripping(" \t") } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw HTTPFailure(message: "malformed chunk size \"\(sizeLine.prefix(20))\"")
            }
            if size == 0 { return (body, false) }
            let wanted = min(size, limit - body.count)
            let (chunk, short) = try read(count: wanted)
            body.append(contentsOf: chunk)
            if short { return (body, true) }
            if body.count >= limit { return (body, true) }
            _ = try readLine(limit: 1024)
        }
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if Array(haystack[start..<(start + needle.count)]) == needle { return start }
        }
        return nil
    }
}
