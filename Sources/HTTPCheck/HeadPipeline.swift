import Glibc
import Synchronization
import SystemIO

/// HEAD requests to plain-HTTP servers, pipelined over a few keep-alive connections per host.
///
/// Why it exists: a cached preflight run asks every remote URL whether it changed, one HEAD
/// each, thousands per run. Through libcurl every request is a transfer of its own (curl
/// dropped HTTP/1.1 pipelining), which costs more CPU than the rest of the cached run and a
/// round trip per request per connection. Pipelining (RFC 9112 §9.3) writes a burst of
/// requests before reading the answers, which come back in order, so a connection carries
/// dozens of HEADs in one round trip and a few system calls.
///
/// What it does not do, on purpose: TLS (https URLs go through ``HTTPTransport``, where
/// HTTP/2 multiplexing gives the same effect), proxies (a Cast device uses none), redirects
/// (the answer to a HEAD is reported as it is). A server that closes a connection with
/// requests unanswered gets them again on a new connection, then one request per
/// connection; a request that still gets no answer fails with
/// ``TransferFailure/Kind/protocolError``, and the caller may send it through
/// ``HTTPTransport`` instead.
///
/// ```swift
/// let pipeline = HeadPipeline()
/// let answers = await pipeline.send(["http://127.0.0.1:8080/a.mp4"], headers: [HTTPHeader("Origin", "https://x")],
///                                   timeout: .seconds(10))
/// ```
public final class HeadPipeline: Sendable {
    private let shared: PipelineShared

    /// Starts the connection thread.
    ///
    /// - Parameters:
    ///   - connectionsPerHost: connections open at once to one `host:port` (Chromium's limit is 6).
    ///   - depth: requests written ahead of their answers on one connection.
    public init(connectionsPerHost: Int = 6, depth: Int = 32) {
        shared = PipelineShared(connectionsPerHost: max(1, connectionsPerHost), depth: max(1, depth))
        PipelineLoop.start(shared)
    }

    deinit { shared.shutDown() }

    /// Whether `url` is one this pipeline sends: an absolute `http://` URL. Only its scheme is
    /// looked at; ``send(_:headers:timeout:)`` parses the rest once.
    public static func accepts(_ url: String) -> Bool {
        let scheme = Array("http://".utf8)
        var bytes = url.utf8.makeIterator()
        for expected in scheme {
            guard let byte = bytes.next(), byte | (expected >= 0x61 ? 0x20 : 0) == expected else { return false }
        }
        return true
    }

    /// Sends a HEAD for each URL, with `headers` on every request, and returns the answers in
    /// the same order. URLs this pipeline does not send (see ``accepts(_:)``) fail with
    /// ``TransferFailure/Kind/invalidURL``.
    public func send(_ urls: [String], headers: [HTTPHeader], timeout: Duration) async -> [Result<HTTPResponse, TransferFailure>] {
        guard !urls.isEmpty else { return [] }
        let batch = TransferBatch(count: urls.count)
        let deadline = ContinuousClock.now + timeout
        var requests: [PipelinedHead] = []
        requests.reserveCapacity(urls.count)
        for (index, text) in urls.enumerated() {
            let head = PipelinedHead(batch: batch, index: index, deadline: deadline)
            switch Self.request(for: text, headers: headers) {
            case .success(let (url, bytes)):
                head.url = url
                head.bytes = bytes
                requests.append(head)
            case .failure(let failure):
                head.resolve(.failure(failure))
            }
        }
        let submitted = requests
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if batch.install(continuation) { shared.submit(submitted) }
            }
        } onCancel: {
            for request in submitted { request.resolve(.failure(TransferFailure(.cancelled, "the check was cancelled"))) }
            shared.wake()
        }
    }

    /// The request's bytes, or why it cannot be sent: only http URLs, and nothing in the
    /// target or the headers that could end a line or split the request.
    static func request(for text: String, headers: [HTTPHeader]) -> Result<(WebURL, [UInt8]), TransferFailure> {
        guard let url = WebURL(text), url.scheme == "http" else {
            return .failure(TransferFailure(.invalidURL, "'\(text)' is not an absolute http URL"))
        }
        let target = url.target
        guard target.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            return .failure(TransferFailure(.invalidURL, "'\(text)' has characters a request line cannot carry"))
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 + target.utf8.count + headers.count * 48)
        bytes.append(contentsOf: "HEAD ".utf8)
        bytes.append(contentsOf: target.utf8)
        bytes.append(contentsOf: " HTTP/1.1\r\nHost: ".utf8)
        bytes.append(contentsOf: url.host.utf8)
        if let port = url.port { bytes.append(contentsOf: ":\(port)".utf8) }
        bytes.append(contentsOf: "\r\n".utf8)
        for header in headers {
            guard !header.name.utf8.contains(where: { $0 <= 0x20 || $0 == 0x3A || $0 >= 0x7F }),
                  !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
            else {
                return .failure(TransferFailure(.other, "the header '\(header.name)' cannot be sent as it is"))
            }
            bytes.append(contentsOf: header.name.utf8)
            bytes.append(contentsOf: ": ".utf8)
            bytes.append(contentsOf: header.value.utf8)
            bytes.append(contentsOf: "\r\n".utf8)
        }
        bytes.append(contentsOf: "\r\n".utf8)
        return .success((url, bytes))
    }
}

/// One HEAD request; resolved exactly once, by the loop or by cancellation.
final class PipelinedHead: @unchecked Sendable {
    let batch: TransferBatch
    let index: Int
    let deadline: ContinuousClock.Instant
    // Written before submission and read only by the loop thread afterwards: the submission
    // queue's lock orders the two.
    var url: WebURL?
    var bytes: [UInt8] = []
    /// How many connections closed when this was the next request to answer; read and
    /// written by the loop thread only.
    var attempts = 0
    private let resolved = Mutex(false)

    init(batch: TransferBatch, index: Int, deadline: ContinuousClock.Instant) {
        self.batch = batch
        self.index = index
        self.deadline = deadline
    }

    var isResolved: Bool { resolved.withLock { $0 } }

    func resolve(_ outcome: Result<HTTPResponse, TransferFailure>) {
        let isFirst = resolved.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        if isFirst { batch.complete(index, with: outcome) }
    }
}

/// What callers and the loop thread share: submissions, the shutdown flag, the wake pipe.
final class PipelineShared: Sendable {
    let connectionsPerHost: Int
    let depth: Int
    /// Wakes the loop from `poll`; nil when no pipe could be made (the loop then notices new
    /// requests within a second).
    let wakePipe = try? WakePipe()
    private struct State {
        var submitted: [PipelinedHead] = []
        var isShutDown = false
    }
    private let state = Mutex(State())

    init(connectionsPerHost: Int, depth: Int) {
        self.connectionsPerHost = connectionsPerHost
        self.depth = depth
    }

    // The pipe is closed (on release) only when neither the pipeline nor the loop thread
    // holds this any more.

    func submit(_ requests: [PipelinedHead]) {
        let accepted = state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            state.submitted.append(contentsOf: requests)
            return true
        }
        if accepted {
            wake()
        } else {
            for request in requests { request.resolve(.failure(TransferFailure(.cancelled, "the pipeline was shut down"))) }
        }
    }

    func take() -> (requests: [PipelinedHead], isShutDown: Bool) {
        state.withLock { state in
            defer { state.submitted = [] }
            return (state.submitted, state.isShutDown)
        }
    }

    func shutDown() {
        state.withLock { $0.isShutDown = true }
        wake()
    }

    func wake() { wakePipe?.wake() }
}

/// The loop thread: per-host queues and connections, every socket registered with one
/// SystemIO ``Reactor``, whose timer wakes the loop at the oldest unanswered request's deadline.
final class PipelineLoop {
    /// A connection and the requests written on it, oldest first.
    final class Connection {
        let descriptor: Int32
        /// The socket's registration with the loop's reactor; nil once closed.
        var registration: Reactor.Registration?
        var isConnected = false
        var inFlight: [PipelinedHead] = []
        var inFlightHead = 0
        var output: [UInt8] = []
        var outputOffset = 0
        var input: [UInt8] = []
        /// Where the search for the end of the next response head resumes.
        var scanOffset = 0
        var answered = 0
        var lastActivity: ContinuousClock.Instant

        init(descriptor: Int32, now: ContinuousClock.Instant) {
            self.descriptor = descriptor
            lastActivity = now
        }

        var waitingCount: Int { inFlight.count - inFlightHead }
    }

    /// One `host:port`: its address, waiting requests and connections.
    final class Host {
        let name: String
        let port: Int
        var address: [UInt8]?
        var addressFailure: TransferFailure?
        var queue: [PipelinedHead] = []
        var queueHead = 0
        var connections: [Connection] = []
        /// Lowered to 1 when the server drops pipelined requests.
        var depth: Int
        /// Set when the server answers only one request per connection.
        var oneRequestPerConnection = false

        init(name: String, port: Int, depth: Int) {
            self.name = name
            self.port = port
            self.depth = depth
        }

        var queuedCount: Int { queue.count - queueHead }

        func popQueued() -> PipelinedHead? {
            while queueHead < queue.count {
                let request = queue[queueHead]
                queueHead += 1
                if queueHead == queue.count {
                    queue.removeAll(keepingCapacity: true)
                    queueHead = 0
                }
                if !request.isResolved { return request }
            }
            return nil
        }
    }

    /// Response heads larger than this end the connection: no real server sends 64 KiB of headers.
    static let headLimit = 64 * 1024
    /// Connections with nothing to do are closed after this long.
    static let idleLimit: Duration = .seconds(5)
    /// A request that was next in line when this many connections closed fails.
    static let attemptLimit = 3

    private let shared: PipelineShared
    private let reactor = Reactor()
    /// Wakes the loop at the nearest deadline; replaced every turn.
    private var wakeUp: Reactor.Timer?
    private var hosts: [String: Host] = [:]
    /// Where answers are read into before they join a connection's input.
    private var chunk = [UInt8](repeating: 0, count: 64 * 1024)

    private init(shared: PipelineShared) { self.shared = shared }

    static func start(_ shared: PipelineShared) {
        do {
            try IOThread.detach(named: "http-head-pipe") { PipelineLoop(shared: shared).run() }
        } catch {
            shared.shutDown()
            for request in shared.take().requests {
                request.resolve(.failure(TransferFailure(.other, "cannot start the HEAD pipeline thread (\(error))")))
            }
        }
    }

    private func run() {
        if let pipe = shared.wakePipe {
            // Each turn below takes the submissions; the handler only empties the pipe.
            reactor.register(pipe.readDescriptor, for: .readable) { _ in pipe.drain() }
        }
        while true {
            let (submitted, isShutDown) = shared.take()
            for request in submitted { enqueue(request) }
            if isShutDown { break }
            let now = reactor.clock.now
            expire(now: now)
            for host in hosts.values { feed(host, now: now) }

            // What each socket waits for, and when the oldest written request runs out of time.
            var nextDeadline = now + .seconds(1)
            for host in hosts.values {
                for connection in host.connections {
                    var interest: Reactor.Interest = []
                    if !connection.isConnected || connection.outputOffset < connection.output.count { interest.insert(.writable) }
                    if connection.isConnected { interest.insert(.readable) }
                    if let registration = connection.registration { reactor.update(registration, interest: interest) }
                    if connection.inFlightHead < connection.inFlight.count {
                        nextDeadline = min(nextDeadline, connection.inFlight[connection.inFlightHead].deadline)
                    }
                }
            }
            if let wakeUp { reactor.cancel(wakeUp) }
            // The timer only wakes the loop; expire() above does the work next turn.
            wakeUp = reactor.schedule(at: nextDeadline) {}
            do {
                try reactor.runOnce()
            } catch {
                break
            }
        }
        let failure = TransferFailure(.cancelled, "the pipeline was shut down")
        for host in hosts.values {
            for connection in host.connections {
                for request in connection.inFlight[connection.inFlightHead...] { request.resolve(.failure(failure)) }
                closeSocket(of: connection)
            }
            while let request = host.popQueued() { request.resolve(.failure(failure)) }
        }
        hosts = [:]
    }

    /// Unregisters a connection's socket from the reactor and closes it.
    private func closeSocket(of connection: Connection) {
        if let registration = connection.registration { reactor.unregister(registration) }
        connection.registration = nil
        close(connection.descriptor)
    }

    private func enqueue(_ request: PipelinedHead) {
        guard !request.isResolved, let url = request.url else { return }
        let key = url.hostAndPort
        let host: Host
        if let known = hosts[key] {
            host = known
        } else {
            host = Host(name: url.host, port: url.effectivePort, depth: shared.depth)
            hosts[key] = host
        }
        host.queue.append(request)
    }

    /// Fails requests whose time ran out: queued ones in place, written ones by closing their
    /// connection (the answers still to come could not be told apart any more).
    private func expire(now: ContinuousClock.Instant) {
        for host in hosts.values {
            for connection in host.connections where connection.inFlightHead < connection.inFlight.count {
                if connection.inFlight[connection.inFlightHead].deadline <= now {
                    drop(connection, of: host, requeue: false, failure: TransferFailure(.timeout, "no answer to the HEAD request in time"))
                }
            }
            if host.queuedCount > 0 {
                for request in host.queue[host.queueHead...] where request.deadline <= now {
                    request.resolve(.failure(TransferFailure(.timeout, "the HEAD request was not sent in time")))
                }
            }
            // Idle connections are closed after a while; hosts with nothing left are forgotten.
            host.connections.removeAll { connection in
                guard connection.waitingCount == 0, now - connection.lastActivity > Self.idleLimit else { return false }
                closeSocket(of: connection)
                return true
            }
        }
        hosts = hosts.filter { !$0.value.connections.isEmpty || $0.value.queuedCount > 0 }
    }

    /// Opens connections the host's queue needs and writes queued requests on them.
    private func feed(_ host: Host, now: ContinuousClock.Instant) {
        guard host.queuedCount > 0 else { return }
        if host.address == nil, host.addressFailure == nil { resolve(host) }
        if let failure = host.addressFailure {
            while let request = host.popQueued() { request.resolve(.failure(failure)) }
            host.addressFailure = nil
            return
        }
        let depth = host.oneRequestPerConnection ? 1 : host.depth
        // Spread the queue over the connections first, then open more while it is long.
        for connection in host.connections {
            fill(connection, from: host, depth: depth)
        }
        while host.queuedCount > 0, host.connections.count < shared.connectionsPerHost {
            guard let connection = connect(host) else { return }
            host.connections.append(connection)
            fill(connection, from: host, depth: depth)
        }
    }

    private func fill(_ connection: Connection, from host: Host, depth: Int) {
        // One request per connection: nothing is written after the first until it closes.
        if host.oneRequestPerConnection, connection.answered > 0 || connection.waitingCount > 0 { return }
        while connection.waitingCount < depth, let request = host.popQueued() {
            if connection.inFlightHead > 0, connection.inFlightHead == connection.inFlight.count {
                connection.inFlight.removeAll(keepingCapacity: true)
                connection.inFlightHead = 0
            }
            connection.inFlight.append(request)
            if connection.outputOffset == connection.output.count {
                connection.output.removeAll(keepingCapacity: true)
                connection.outputOffset = 0
            }
            connection.output.append(contentsOf: request.bytes)
        }
    }

    /// Looks the host up once (a literal address costs nothing; a name may block this thread,
    /// which only ever sends these HEADs).
    private func resolve(_ host: Host) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_family = AF_UNSPEC
        var list: UnsafeMutablePointer<addrinfo>?
        let name = host.name.hasPrefix("[") ? String(host.name.dropFirst().dropLast()) : host.name
        let status = getaddrinfo(name, String(host.port), &hints, &list)
        defer { if let list { freeaddrinfo(list) } }
        guard status == 0, let first = list, let address = first.pointee.ai_addr else {
            host.addressFailure = TransferFailure(.dns, "cannot resolve \(host.name): \(String(cString: gai_strerror(status)))")
            return
        }
        host.address = Array(UnsafeRawBufferPointer(start: address, count: Int(first.pointee.ai_addrlen)))
    }

    private func connect(_ host: Host) -> Connection? {
        guard let address = host.address else { return nil }
        let family = address.withUnsafeBytes { $0.load(fromByteOffset: 0, as: sa_family_t.self) }
        let descriptor = socket(Int32(family), Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var one: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        let status = address.withUnsafeBytes { raw in
            Glibc.connect(descriptor, raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), socklen_t(raw.count))
        }
        if status != 0, errno != EINPROGRESS {
            let failure = TransferFailure(.connect, "cannot connect to \(host.name):\(host.port): \(String(cString: strerror(errno)))")
            close(descriptor)
            failConnect(host, failure)
            return nil
        }
        let connection = Connection(descriptor: descriptor, now: reactor.clock.now)
        connection.isConnected = status == 0
        // The interest is set each turn once requests are written; until then, only hang-ups.
        connection.registration = reactor.register(descriptor, for: []) { [unowned self] readiness in
            self.service(connection, of: host, readiness: readiness)
        }
        return connection
    }

    /// A refused connection fails what is queued for the host, as curl would fail each transfer.
    private func failConnect(_ host: Host, _ failure: TransferFailure) {
        guard host.connections.allSatisfy({ !$0.isConnected }) else { return }
        while let request = host.popQueued() { request.resolve(.failure(failure)) }
    }

    private func service(_ connection: Connection, of host: Host, readiness: Reactor.Readiness) {
        connection.lastActivity = reactor.clock.now
        if !connection.isConnected {
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(connection.descriptor, SOL_SOCKET, SO_ERROR, &error, &length)
            guard error == 0, readiness.isWritable else {
                let failure = TransferFailure(
                    .connect, "cannot connect to \(host.name):\(host.port): \(String(cString: strerror(error == 0 ? ECONNREFUSED : error)))")
                drop(connection, of: host, requeue: false, failure: failure)
                failConnect(host, failure)
                return
            }
            connection.isConnected = true
        }
        if readiness.isWritable, connection.outputOffset < connection.output.count {
            let written = connection.output.withUnsafeBytes { raw in
                send(connection.descriptor, raw.baseAddress! + connection.outputOffset, raw.count - connection.outputOffset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                connection.outputOffset += written
            } else if written < 0, errno != EAGAIN, errno != EINTR {
                drop(connection, of: host, requeue: true, failure: nil)
                return
            }
        }
        if readiness.isReadable || readiness.isClosed {
            readAnswers(connection, of: host)
        }
    }

    private func readAnswers(_ connection: Connection, of host: Host) {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress!, $0.count, 0) }
            if count > 0 {
                connection.input.append(contentsOf: chunk[..<count])
                if !parseAnswers(connection, of: host) { return }
                if count < chunk.count { return }
                continue
            }
            if count < 0, errno == EAGAIN || errno == EINTR { return }
            // The server closed the connection (or it broke): what it did not answer is sent again.
            drop(connection, of: host, requeue: true, failure: nil)
            return
        }
    }

    /// Resolves every complete answer in the input; false when the connection was dropped.
    private func parseAnswers(_ connection: Connection, of host: Host) -> Bool {
        var start = 0
        defer {
            if start > 0 {
                connection.input.removeFirst(start)
                connection.scanOffset = max(0, connection.scanOffset - start)
            }
        }
        while true {
            guard let end = Self.headEnd(in: connection.input, from: max(start, connection.scanOffset)) else {
                connection.scanOffset = max(start, connection.input.count - 3)
                if connection.input.count - start > Self.headLimit {
                    failOldest(connection, of: host, TransferFailure(.protocolError, "the response head is larger than 64 KiB"))
                    return false
                }
                return true
            }
            let headBytes = Array(connection.input[start..<end])
            start = end
            connection.scanOffset = end
            guard let head = HTTPResponseHead.parse(headBytes) else {
                failOldest(connection, of: host, TransferFailure(.protocolError, "the server's answer is not an HTTP response"))
                return false
            }
            // Interim answers (100 Continue, 103 Early Hints) precede the real one.
            if head.status < 200 { continue }
            guard connection.inFlightHead < connection.inFlight.count else {
                drop(connection, of: host, requeue: true, failure: nil)
                return false
            }
            let request = connection.inFlight[connection.inFlightHead]
            connection.inFlightHead += 1
            connection.answered += 1
            request.resolve(.success(HTTPResponse(status: head.status, reason: head.reason, version: head.version, headers: head.headers)))
            let closes = head.headers.listElements("connection").contains { $0.equalsIgnoringASCIICase("close") }
                || (head.version == "HTTP/1.0" && !head.headers.listElements("connection").contains { $0.equalsIgnoringASCIICase("keep-alive") })
            if closes {
                if connection.answered == 1 { host.oneRequestPerConnection = true }
                drop(connection, of: host, requeue: true, failure: nil)
                return false
            }
        }
    }

    /// The index just past the blank line ending the response head that starts the scan, or nil.
    static func headEnd(in bytes: [UInt8], from offset: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = max(0, offset)
        while index + 3 < bytes.count {
            if bytes[index + 3] != 0x0A { index += bytes[index + 3] == 0x0D ? 1 : 4; continue }
            if bytes[index] == 0x0D, bytes[index + 1] == 0x0A, bytes[index + 2] == 0x0D { return index + 4 }
            index += 1
        }
        return nil
    }

    /// A broken answer: the oldest request fails, the connection ends, the rest are sent again.
    private func failOldest(_ connection: Connection, of host: Host, _ failure: TransferFailure) {
        if connection.inFlightHead < connection.inFlight.count {
            connection.inFlight[connection.inFlightHead].resolve(.failure(failure))
            connection.inFlightHead += 1
        }
        host.depth = 1
        drop(connection, of: host, requeue: true, failure: nil)
    }

    /// Closes a connection. Its unanswered requests go back to the front of the host's queue
    /// (`requeue`) unless they were written too often, or fail with `failure`.
    private func drop(_ connection: Connection, of host: Host, requeue: Bool, failure: TransferFailure?) {
        closeSocket(of: connection)
        host.connections.removeAll { $0 === connection }
        let unanswered = connection.inFlight[connection.inFlightHead...].filter { !$0.isResolved }
        connection.inFlight = []
        connection.inFlightHead = 0
        guard !unanswered.isEmpty else { return }
        guard requeue else {
            for request in unanswered { request.resolve(.failure(failure ?? Self.unanswered)) }
            return
        }
        // Requests left unanswered by a close: the server does not pipeline, or answers one
        // request per connection. Only the request that was next in line counts the attempt;
        // the others were never its turn.
        if unanswered.count > 1 {
            host.depth = 1
            if connection.answered == 1 { host.oneRequestPerConnection = true }
        }
        unanswered[0].attempts += 1
        var again = unanswered
        if unanswered[0].attempts >= Self.attemptLimit {
            unanswered[0].resolve(.failure(Self.unanswered))
            again.removeFirst()
        }
        host.queue.replaceSubrange(0..<host.queueHead, with: again)
        host.queueHead = 0
    }

    private static let unanswered = TransferFailure(.protocolError, "the server closed the connection without answering")
}

@available(*, unavailable)
extension PipelineLoop: Sendable {}
