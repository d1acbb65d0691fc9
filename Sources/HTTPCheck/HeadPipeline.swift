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
    public func send(_ urls: [String], headers: [HTTPHeader], timeout: Duration) async -> [Result<
        HTTPResponse, TransferFailure
    >] {
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
            for request in submitted {
                request.resolve(.failure(TransferFailure(.cancelled, "the check was cancelled")))
            }
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
        var resolved: [(host: String, result: Result<[SocketAddress], ResolveError>)] = []
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
            for request in requests {
                request.resolve(.failure(TransferFailure(.cancelled, "the pipeline was shut down")))
            }
        }
    }

    func take() -> (
        requests: [PipelinedHead], resolved: [(host: String, result: Result<[SocketAddress], ResolveError>)],
        isShutDown: Bool
    ) {
        state.withLock { state in
            defer {
                state.submitted = []
                state.resolved = []
            }
            return (state.submitted, state.resolved, state.isShutDown)
        }
    }

    /// Hands the loop the addresses of the `host:port` keyed `host`, from the resolver's thread.
    func deliver(_ result: Result<[SocketAddress], ResolveError>, for host: String) {
        state.withLock { $0.resolved.append((host, result)) }
        wake()
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
        let socket: TCPSocket
        /// Which of the host's addresses it connects to.
        let addressIndex: Int
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

        init(socket: TCPSocket, addressIndex: Int, now: ContinuousClock.Instant) {
            self.socket = socket
            self.addressIndex = addressIndex
            lastActivity = now
        }

        var waitingCount: Int { inFlight.count - inFlightHead }
    }

    /// One `host:port`: its addresses, waiting requests and connections.
    final class Host {
        let key: String
        let name: String
        let port: Int
        /// Every address of the host, in the resolver's order; nil until they are known.
        var addresses: [SocketAddress]?
        /// The address new connections go to: the next one is tried when connecting to this one
        /// fails before any connection to the host got through.
        var addressIndex = 0
        var hasConnected = false
        /// A lookup is under way on the resolver's thread.
        var isResolving = false
        var addressFailure: TransferFailure?
        var queue: [PipelinedHead] = []
        var queueHead = 0
        var connections: [Connection] = []
        /// Lowered to 1 when the server drops pipelined requests.
        var depth: Int
        /// Set when the server answers only one request per connection.
        var oneRequestPerConnection = false

        init(key: String, name: String, port: Int, depth: Int) {
            self.key = key
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
            let (submitted, resolved, isShutDown) = shared.take()
            for request in submitted { enqueue(request) }
            for (key, result) in resolved { take(result, for: key) }
            if isShutDown { break }
            let now = reactor.clock.now
            expire(now: now)
            for host in hosts.values { feed(host, now: now) }

            // What each socket waits for, and when the oldest written request runs out of time.
            var nextDeadline = now + .seconds(1)
            for host in hosts.values {
                for connection in host.connections {
                    var interest: Reactor.Interest = []
                    if !connection.isConnected || connection.outputOffset < connection.output.count {
                        interest.insert(.writable)
                    }
                    if connection.isConnected { interest.insert(.readable) }
                    if let registration = connection.registration { reactor.update(registration, interest: interest) }
                    if connection.inFlightHead < connection.inFlight.count {
                        nextDeadline = min(nextDeadline, connection.inFlight[connection.inFlightHead].deadline)
                    }
                }
                // Requests waiting for a name to resolve time out in the queue.
                if host.isResolving, host.queuedCount > 0 {
                    nextDeadline = min(nextDeadline, host.queue[host.queueHead].deadline)
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
        connection.socket.close()
    }

    private func enqueue(_ request: PipelinedHead) {
        guard !request.isResolved, let url = request.url else { return }
        let key = url.hostAndPort
        let host: Host
        if let known = hosts[key] {
            host = known
        } else {
            host = Host(key: key, name: url.host, port: url.effectivePort, depth: shared.depth)
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
                    drop(
                        connection, of: host, requeue: false,
                        failure: TransferFailure(.timeout, "no answer to the HEAD request in time"))
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
        if host.addresses == nil, host.addressFailure == nil {
            if !host.isResolving { resolve(host) }
            // The queue waits for the resolver's answer, which wakes the loop.
            if host.addresses == nil, host.addressFailure == nil { return }
        }
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

    /// Looks the host up: a literal address at once, a name on the resolver's thread (never
    /// on this loop, which serves every other host meanwhile); the answer comes back through
    /// the shared state and wakes the loop.
    private func resolve(_ host: Host) {
        if let numeric = AddressResolver.numericAddresses(host: host.name, port: host.port) {
            host.addresses = numeric
            host.addressIndex = 0
            return
        }
        host.isResolving = true
        let shared = self.shared
        let key = host.key
        AddressResolver.resolve(host: host.name, port: host.port) { result in shared.deliver(result, for: key) }
    }

    /// The resolver's answer for the host keyed `key` (forgotten meanwhile when its requests
    /// all timed out).
    private func take(_ result: Result<[SocketAddress], ResolveError>, for key: String) {
        guard let host = hosts[key], host.isResolving else { return }
        host.isResolving = false
        switch result {
        case .success(let addresses):
            host.addresses = addresses
            host.addressIndex = 0
        case .failure(let error):
            host.addressFailure = TransferFailure(.dns, "cannot resolve \(host.name): \(error.reason)")
        }
    }

    private func connect(_ host: Host) -> Connection? {
        while let addresses = host.addresses, host.addressIndex < addresses.count {
            let index = host.addressIndex
            let address = addresses[index]
            let socket: TCPSocket
            let progress: TCPSocket.ConnectProgress
            do {
                socket = try TCPSocket.open(family: address.family)
            } catch {
                return nil
            }
            do {
                progress = try socket.connect(to: address)
            } catch {
                socket.close()
                let failure = TransferFailure(.connect, "cannot connect to \(host.name):\(host.port): \(error.reason)")
                if moveToNextAddress(host, after: index) { continue }
                failConnect(host, failure)
                return nil
            }
            let connection = Connection(socket: socket, addressIndex: index, now: reactor.clock.now)
            connection.isConnected = progress == .connected
            if connection.isConnected { host.hasConnected = true }
            // The interest is set each turn once requests are written; until then, only hang-ups.
            connection.registration = reactor.register(socket.descriptor, for: []) { [unowned self] readiness in
                self.service(connection, of: host, readiness: readiness)
            }
            return connection
        }
        return nil
    }

    /// Moves the host on from the address at `index`, which could not be connected to, when no
    /// connection to the host has got through yet and another address is left (IPv6 first, then
    /// IPv4, as the resolver ordered them); false when there is none to try.
    private func moveToNextAddress(_ host: Host, after index: Int) -> Bool {
        guard !host.hasConnected, let addresses = host.addresses else { return false }
        if index < host.addressIndex { return true }  // another connection moved on already
        guard index + 1 < addresses.count else { return false }
        host.addressIndex = index + 1
        return true
    }

    /// A refused connection fails what is queued for the host, as curl would fail each transfer.
    private func failConnect(_ host: Host, _ failure: TransferFailure) {
        guard host.connections.allSatisfy({ !$0.isConnected }) else { return }
        while let request = host.popQueued() { request.resolve(.failure(failure)) }
    }

    private func service(_ connection: Connection, of host: Host, readiness: Reactor.Readiness) {
        connection.lastActivity = reactor.clock.now
        if !connection.isConnected {
            var problem: SystemCallError?
            do {
                try connection.socket.finishConnect()
                if !readiness.isWritable { problem = SystemCallError.connectionRefused("connect") }
            } catch {
                problem = error
            }
            if let problem {
                if moveToNextAddress(host, after: connection.addressIndex) {
                    // Its requests were never sent: they wait for a connection to the next address.
                    setBack(connection, of: host)
                    return
                }
                let failure = TransferFailure(
                    .connect, "cannot connect to \(host.name):\(host.port): \(problem.reason)")
                drop(connection, of: host, requeue: false, failure: failure)
                failConnect(host, failure)
                return
            }
            connection.isConnected = true
            host.hasConnected = true
        }
        if readiness.isWritable, connection.outputOffset < connection.output.count {
            let written = connection.output.withUnsafeBytes { raw in
                connection.socket.write(UnsafeRawBufferPointer(rebasing: raw[connection.outputOffset...]))
            }
            switch written {
            case .transferred(let count): connection.outputOffset += count
            case .wouldBlock: break
            case .endOfStream, .failed:
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
            let result = chunk.withUnsafeMutableBytes { connection.socket.read(into: $0) }
            if case .transferred(let count) = result {
                connection.input.append(contentsOf: chunk[..<count])
                if !parseAnswers(connection, of: host) { return }
                if count < chunk.count { return }
                continue
            }
            if result == .wouldBlock { return }
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
                    failOldest(
                        connection, of: host, TransferFailure(.protocolError, "the response head is larger than 64 KiB")
                    )
                    return false
                }
                return true
            }
            let headBytes = Array(connection.input[start..<end])
            start = end
            connection.scanOffset = end
            guard let head = HTTPResponseHead.parse(headBytes) else {
                failOldest(
                    connection, of: host, TransferFailure(.protocolError, "the server's answer is not an HTTP response")
                )
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
            request.resolve(
                .success(
                    HTTPResponse(status: head.status, reason: head.reason, version: head.version, headers: head.headers)
                ))
            let closes =
                head.headers.listElements("connection").contains { $0.equalsIgnoringASCIICase("close") }
                || (head.version == "HTTP/1.0"
                    && !head.headers.listElements("connection").contains { $0.equalsIgnoringASCIICase("keep-alive") })
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
            if bytes[index + 3] != 0x0A {
                index += bytes[index + 3] == 0x0D ? 1 : 4
                continue
            }
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

    /// Closes a connection that never got through; its requests go back to the front of the
    /// host's queue without counting an attempt.
    private func setBack(_ connection: Connection, of host: Host) {
        closeSocket(of: connection)
        host.connections.removeAll { $0 === connection }
        let unsent = connection.inFlight[connection.inFlightHead...].filter { !$0.isResolved }
        connection.inFlight = []
        connection.inFlightHead = 0
        host.queue.replaceSubrange(0..<host.queueHead, with: unsent)
        host.queueHead = 0
    }

    private static let unanswered = TransferFailure(
        .protocolError, "the server closed the connection without answering")
}

@available(*, unavailable)
extension PipelineLoop: Sendable {}
