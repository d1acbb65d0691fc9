internal import CCurl
import Synchronization
import SystemIO

/// Connection limits for an ``HTTPTransport``.
public struct TransportLimits: Sendable, Hashable {
    /// Transfers running at once against one `host:port`. Chromium opens at most 6
    /// connections per host, so a server that copes with a receiver copes with this.
    public var connectionsPerHost: Int
    /// Transfers running at once in all.
    public var totalConnections: Int
    /// How long a TCP and TLS connection may take to establish.
    public var connectTimeout: Duration

    /// Creates limits; the defaults match Chromium's per-host limit.
    public init(connectionsPerHost: Int = 6, totalConnections: Int = 48, connectTimeout: Duration = .seconds(5)) {
        self.connectionsPerHost = max(1, connectionsPerHost)
        self.totalConnections = max(1, totalConnections)
        self.connectTimeout = connectTimeout
    }
}

/// Sends HTTP requests through one libcurl multi handle, driven by a SystemIO ``Reactor`` on
/// its own thread.
///
/// Every request of a transport goes through its loop, so connections are reused across
/// resources of the same host, the per-host limit holds across the whole check, and no
/// Swift task ever blocks: `send` suspends on a continuation that the loop thread resumes.
/// Redirects are not followed here; the checker follows them hop by hop because CORS must be
/// checked on every hop.
///
/// ```swift
/// let transport = HTTPTransport()
/// let result = await transport.send(HTTPRequest(.get, "http://127.0.0.1:8080/a.m3u8", bodyLimit: 1 << 20))
/// ```
///
/// The loop thread ends when the transport is released; transfers still running then end as
/// ``TransferFailure/Kind/cancelled``.
public final class HTTPTransport: Sendable {
    private let shared: TransportShared

    /// Starts the event loop thread.
    ///
    /// - Parameters:
    ///   - limits: connection limits.
    ///   - certificateAuthorities: a PEM file of CA certificates to trust instead of the
    ///     system's, for servers with a private CA. Cast devices trust only public CAs, so a
    ///     check with this option says nothing about whether a device accepts the certificate.
    ///   - sourceAddress: the local address requests leave from, nil for the system's choice.
    ///     The receiver emulator bound to one address fetches from it, as a device's requests
    ///     come from the device's own address (a server that answers only the device relies on it).
    public init(
        limits: TransportLimits = TransportLimits(), certificateAuthorities: String? = nil, sourceAddress: String? = nil
    ) {
        shared = TransportShared(
            limits: limits, certificateAuthorities: certificateAuthorities, sourceAddress: sourceAddress)
        CurlEventLoop.start(shared)
    }

    deinit { shared.shutDown() }

    /// Sends one request and returns its response (one hop) or why there is none.
    ///
    /// - Parameters:
    ///   - request: the request; its ``HTTPRequest/timeout`` bounds this transfer.
    ///   - deadline: when the whole check must be over; a request still waiting for a
    ///     connection slot then fails with ``TransferFailure/Kind/timeout`` without being sent.
    public func send(_ request: HTTPRequest, deadline: ContinuousClock.Instant? = nil) async -> Result<
        HTTPResponse, TransferFailure
    > {
        let transfer = PendingTransfer(request: request, deadline: deadline)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if transfer.install(continuation) { shared.submit(transfer) }
            }
        } onCancel: {
            transfer.resolve(.failure(TransferFailure(.cancelled, "the check was cancelled")))
            shared.noteCancellation()
        }
    }

    /// Sends many requests at once and returns their outcomes in the same order.
    ///
    /// The requests are queued in one step and the caller is resumed once, when the last one
    /// ends: for thousands of small requests (one HEAD per URL to revalidate a cache) this
    /// spares a task, a continuation and a wake-up of the loop per request. Each host's
    /// connection limit still holds, and connections are reused across the batch.
    public func send(all requests: [HTTPRequest], deadline: ContinuousClock.Instant? = nil) async -> [Result<
        HTTPResponse, TransferFailure
    >] {
        guard !requests.isEmpty else { return [] }
        let batch = TransferBatch(count: requests.count)
        let transfers = requests.enumerated().map {
            PendingTransfer(request: $0.element, deadline: deadline, batch: batch, index: $0.offset)
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                if batch.install(continuation) { shared.submit(transfers) }
            }
        } onCancel: {
            for transfer in transfers {
                transfer.resolve(.failure(TransferFailure(.cancelled, "the check was cancelled")))
            }
            shared.noteCancellation()
        }
    }
}

/// One request waiting for, or in, a transfer. Resolved exactly once: by the loop when the
/// transfer ends, or by cancellation, whichever comes first. Its outcome goes to the caller's
/// continuation, or to its batch (``HTTPTransport/send(all:deadline:)``).
final class PendingTransfer: Sendable {
    let request: HTTPRequest
    let deadline: ContinuousClock.Instant?
    private let batch: TransferBatch?
    private let batchIndex: Int
    private struct State: ~Copyable {
        var continuation: CheckedContinuation<Result<HTTPResponse, TransferFailure>, Never>?
        var outcome: Result<HTTPResponse, TransferFailure>?
    }
    private let state = Mutex(State())

    init(request: HTTPRequest, deadline: ContinuousClock.Instant?, batch: TransferBatch? = nil, index: Int = 0) {
        self.request = request
        self.deadline = deadline
        self.batch = batch
        self.batchIndex = index
    }

    /// Stores the continuation; returns false when the transfer was already resolved (cancelled
    /// before it started), in which case the continuation has been resumed.
    func install(_ continuation: CheckedContinuation<Result<HTTPResponse, TransferFailure>, Never>) -> Bool {
        let early: Result<HTTPResponse, TransferFailure>? = state.withLock { state in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        if let early {
            continuation.resume(returning: early)
            return false
        }
        return true
    }

    /// Resolves the transfer unless it already was.
    func resolve(_ outcome: Result<HTTPResponse, TransferFailure>) {
        let (isFirst, continuation) = state.withLock {
            state -> (Bool, CheckedContinuation<Result<HTTPResponse, TransferFailure>, Never>?) in
            guard state.outcome == nil else { return (false, nil) }
            state.outcome = outcome
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        guard isFirst else { return }
        if let batch {
            batch.complete(batchIndex, with: outcome)
        } else {
            continuation?.resume(returning: outcome)
        }
    }

    var isResolved: Bool { state.withLock { $0.outcome != nil } }
}

/// The outcomes of requests sent together: the caller waits on one continuation, resumed when
/// the last transfer of the batch is resolved.
final class TransferBatch: Sendable {
    private struct State: ~Copyable {
        var outcomes: [Result<HTTPResponse, TransferFailure>?]
        var remaining: Int
        var continuation: CheckedContinuation<[Result<HTTPResponse, TransferFailure>], Never>?
    }
    private let state: Mutex<State>

    init(count: Int) {
        state = Mutex(State(outcomes: Array(repeating: nil, count: count), remaining: count))
    }

    /// Stores the continuation; returns false when every transfer was already resolved
    /// (cancelled before being sent), in which case the continuation has been resumed.
    func install(_ continuation: CheckedContinuation<[Result<HTTPResponse, TransferFailure>], Never>) -> Bool {
        let finished: [Result<HTTPResponse, TransferFailure>]? = state.withLock { state in
            guard state.remaining > 0 else { return Self.collect(state.outcomes) }
            state.continuation = continuation
            return nil
        }
        if let finished {
            continuation.resume(returning: finished)
            return false
        }
        return true
    }

    func complete(_ index: Int, with outcome: Result<HTTPResponse, TransferFailure>) {
        let resumption = state.withLock {
            state -> (
                CheckedContinuation<[Result<HTTPResponse, TransferFailure>], Never>,
                [Result<HTTPResponse, TransferFailure>]
            )? in
            state.outcomes[index] = outcome
            state.remaining -= 1
            guard state.remaining == 0, let continuation = state.continuation else { return nil }
            state.continuation = nil
            return (continuation, Self.collect(state.outcomes))
        }
        if let (continuation, outcomes) = resumption { continuation.resume(returning: outcomes) }
    }

    private static func collect(_ outcomes: [Result<HTTPResponse, TransferFailure>?]) -> [Result<
        HTTPResponse, TransferFailure
    >] {
        // Every slot is filled once `remaining` reaches 0; the fallback is never used.
        outcomes.map { $0 ?? .failure(TransferFailure(.other, "no outcome")) }
    }
}

/// What the callers' threads and the loop thread share: the submission queue, the shutdown
/// flag, and a self-pipe whose read end, registered with the loop's reactor, wakes it.
final class TransportShared: Sendable {
    let limits: TransportLimits
    let certificateAuthorities: String?
    let sourceAddress: String?
    /// Wakes the loop's reactor.
    let wakePipe = try? WakePipe()
    private struct State {
        var submitted: [PendingTransfer] = []
        var isShutDown = false
        /// Bumped on every cancellation, so the loop scans running transfers only when one may
        /// have been cancelled.
        var cancellations = 0
    }
    private let state = Mutex(State())

    init(limits: TransportLimits, certificateAuthorities: String?, sourceAddress: String?) {
        self.limits = limits
        self.certificateAuthorities = certificateAuthorities
        self.sourceAddress = sourceAddress
    }

    // The pipe is closed (on release) only when neither the transport nor the loop thread
    // holds this any more: closing it from the loop would let a late wake() write to a reused
    // descriptor.

    func submit(_ transfer: PendingTransfer) {
        submit([transfer])
    }

    /// Queues transfers for the loop under one lock, with one wake-up.
    func submit(_ transfers: [PendingTransfer]) {
        let accepted = state.withLock { state -> Bool in
            guard !state.isShutDown else { return false }
            state.submitted.append(contentsOf: transfers)
            return true
        }
        if accepted {
            wake()
        } else {
            for transfer in transfers {
                transfer.resolve(.failure(TransferFailure(.cancelled, "the transport was shut down")))
            }
        }
    }

    func takeSubmitted() -> (transfers: [PendingTransfer], isShutDown: Bool, cancellations: Int) {
        state.withLock { state in
            defer { state.submitted = [] }
            return (state.submitted, state.isShutDown, state.cancellations)
        }
    }

    func noteCancellation() {
        state.withLock { $0.cancellations += 1 }
        wake()
    }

    func shutDown() {
        state.withLock { $0.isShutDown = true }
        wake()
    }

    func wake() { wakePipe?.wake() }
}

/// The loop thread's own state: the multi handle, per-host queues and running transfers, on a
/// SystemIO ``Reactor``. Lives and dies on that thread, so it needs no locking.
///
/// libcurl runs through its multi_socket API, so the reactor owns the waiting: curl names the
/// sockets to watch (``socketChanged(_:what:)``, from `CURLMOPT_SOCKETFUNCTION`) and the
/// moment to call it back without socket activity (``timerChanged(_:)``, from
/// `CURLMOPT_TIMERFUNCTION`); the reactor's handlers and timer call
/// `curl_multi_socket_action` for exactly the socket that is ready. Callers reach the loop
/// through ``TransportShared``'s queue and wake pipe, which is registered with the reactor.
final class CurlEventLoop {
    private let shared: TransportShared
    private let multi: UnsafeMutableRawPointer
    private let reactor = Reactor()
    /// The sockets curl asked to watch, with their reactor registrations.
    private var watched: [Int32: Reactor.Registration] = [:]
    /// curl's one timer (`CURLMOPT_TIMERFUNCTION` keeps a single timeout per multi handle).
    private var curlTimer: Reactor.Timer?
    /// Wakes the loop while transfers wait for a slot, so their deadlines are checked.
    private var queueScanTimer: Reactor.Timer?
    /// Transfers waiting for a connection slot, per `host:port`, in arrival order.
    private var waiting: [String: WaitingQueue] = [:]
    private var waitingCount = 0
    /// When queued transfers were last scanned for cancellation and the overall deadline.
    private var lastQueueScan = ContinuousClock.now
    private var runningPerHost: [String: Int] = [:]
    /// Running transfers by easy handle address.
    private var running: [UnsafeMutableRawPointer: RunningTransfer] = [:]

    /// How often transfers waiting for a slot are checked against their deadline.
    private static let queueScanInterval: Duration = .milliseconds(50)

    private init?(shared: TransportShared) {
        guard let multi = castprep_curl_multi_init() else { return nil }
        self.shared = shared
        self.multi = multi
        _ = castprep_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, shared.limits.connectionsPerHost)
        _ = castprep_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, shared.limits.totalConnections)
        _ = castprep_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, shared.limits.totalConnections)
        // The callbacks reach this loop through an unretained pointer: the loop outlives the
        // multi handle, which run() cleans up before returning.
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = castprep_curl_multi_setopt_socket_callback(multi) { _, socket, what, context, _ in
            guard let context else { return -1 }
            Unmanaged<CurlEventLoop>.fromOpaque(context).takeUnretainedValue().socketChanged(socket, what: what)
            return 0
        }
        _ = castprep_curl_multi_setopt_pointer(multi, CURLMOPT_SOCKETDATA, context)
        _ = castprep_curl_multi_setopt_timer_callback(multi) { _, milliseconds, context in
            guard let context else { return -1 }
            Unmanaged<CurlEventLoop>.fromOpaque(context).takeUnretainedValue().timerChanged(milliseconds)
            return 0
        }
        _ = castprep_curl_multi_setopt_pointer(multi, CURLMOPT_TIMERDATA, context)
    }

    /// Starts the loop on a new detached thread.
    static func start(_ shared: TransportShared) {
        do {
            try IOThread.detach(named: "http-transport") {
                // libcurl is loaded here, on the loop's own thread, the first time a transport starts.
                if let problem = CurlLibrary.problem {
                    CurlEventLoop.failEverything(
                        shared, with: TransferFailure(.libraryMissing, "\(problem); \(CurlLibrary.fix)"))
                } else if let loop = CurlEventLoop(shared: shared) {
                    loop.run()
                } else {
                    CurlEventLoop.failEverything(
                        shared, with: TransferFailure(.other, "libcurl could not create a multi handle"))
                }
            }
        } catch {
            shared.shutDown()
            failEverything(shared, with: TransferFailure(.other, "cannot start the HTTP thread (\(error))"))
        }
    }

    private static func failEverything(_ shared: TransportShared, with failure: TransferFailure) {
        // Without a loop, answer every submission immediately; keep doing so until shutdown.
        let reactor = Reactor()
        if let pipe = shared.wakePipe { reactor.register(pipe.readDescriptor, for: .readable) { _ in pipe.drain() } }
        while true {
            let (transfers, isShutDown, _) = shared.takeSubmitted()
            for transfer in transfers { transfer.resolve(.failure(failure)) }
            if isShutDown { return }
            // Without a wake pipe, submissions are answered within a second.
            do { try reactor.runOnce(maxWait: .seconds(1)) } catch { return }
        }
    }

    private func run() {
        if let pipe = shared.wakePipe {
            // Each turn below takes the submissions; the handler only empties the pipe.
            reactor.register(pipe.readDescriptor, for: .readable) { _ in pipe.drain() }
        }
        var cancellationsSeen = 0
        var endReason = "the transport was shut down"
        while true {
            let (submitted, isShutDown, cancellations) = shared.takeSubmitted()
            for transfer in submitted { enqueue(transfer) }
            if isShutDown { break }
            dropResolved(scanRunning: cancellations != cancellationsSeen)
            cancellationsSeen = cancellations
            startWaiting()
            if waitingCount > 0, queueScanTimer == nil {
                queueScanTimer = reactor.schedule(after: Self.queueScanInterval) { [unowned self] in
                    self.queueScanTimer = nil
                }
            }
            // Without a wake pipe, new submissions are noticed within a second.
            do {
                try reactor.runOnce(maxWait: .seconds(1))
            } catch {
                endReason = "the HTTP loop stopped: \(error)"
                break
            }
        }
        let failure = TransferFailure(endReason == "the transport was shut down" ? .cancelled : .other, endReason)
        for (handle, transfer) in running {
            castprep_curl_multi_remove_handle(multi, handle)
            transfer.pending.resolve(.failure(failure))
            transfer.release()
            castprep_curl_easy_cleanup(handle)
        }
        running = [:]
        for queue in waiting.values { for transfer in queue.remaining { transfer.resolve(.failure(failure)) } }
        waiting = [:]
        castprep_curl_multi_cleanup(multi)
        for registration in watched.values { reactor.unregister(registration) }
        watched = [:]
    }

    // MARK: - curl's multi_socket callbacks

    /// `CURLMOPT_SOCKETFUNCTION`: curl wants `socket` watched for `what` (`CURL_POLL_IN`,
    /// `_OUT`, `_INOUT`, `_NONE`) or no longer (`CURL_POLL_REMOVE`). Called from inside curl,
    /// so it only updates the reactor.
    private func socketChanged(_ socket: Int32, what: Int32) {
        if what == CURL_POLL_REMOVE {
            if let registration = watched.removeValue(forKey: socket) { reactor.unregister(registration) }
            return
        }
        var interest: Reactor.Interest = []
        if what & CURL_POLL_IN != 0 { interest.insert(.readable) }
        if what & CURL_POLL_OUT != 0 { interest.insert(.writable) }
        if let registration = watched[socket] {
            reactor.update(registration, interest: interest)
        } else {
            watched[socket] = reactor.register(socket, for: interest) { [unowned self] readiness in
                // As curl's own poll loop does: a hang-up or error is reported as readable, so
                // curl reads the end of the stream or the error itself.
                var events: Int32 = 0
                if readiness.isReadable || readiness.isClosed { events |= CURL_CSELECT_IN }
                if readiness.isWritable { events |= CURL_CSELECT_OUT }
                self.act(on: socket, events: events)
            }
        }
    }

    /// `CURLMOPT_TIMERFUNCTION`: curl wants to be called back after `milliseconds` without
    /// socket activity (0: at the next turn), or not at all (-1). Replaces the previous timer.
    private func timerChanged(_ milliseconds: Int) {
        if let curlTimer { reactor.cancel(curlTimer) }
        curlTimer = nil
        guard milliseconds >= 0 else { return }
        curlTimer = reactor.schedule(after: .milliseconds(milliseconds)) { [unowned self] in
            self.curlTimer = nil
            self.act(on: CURL_SOCKET_TIMEOUT, events: 0)
        }
    }

    /// Lets curl act on a ready socket (or on its timeout), then resolves what finished and
    /// gives freed slots to waiting transfers at once.
    private func act(on socket: Int32, events: Int32) {
        var stillRunning: Int32 = 0
        _ = castprep_curl_multi_socket_action(multi, socket, events, &stillRunning)
        if collectFinished() > 0, waitingCount > 0 { startWaiting() }
    }

    private func enqueue(_ transfer: PendingTransfer) {
        guard !transfer.isResolved else { return }
        guard let url = WebURL(transfer.request.url) else {
            transfer.resolve(
                .failure(TransferFailure(.invalidURL, "'\(transfer.request.url)' is not an absolute http(s) URL")))
            return
        }
        waiting[url.hostAndPort, default: WaitingQueue()].append(transfer)
        waitingCount += 1
    }

    /// Ends transfers that were cancelled, and queued ones whose check ran out of time. Queues
    /// are scanned at most every 50 ms: a long queue must not cost a scan per completed transfer.
    private func dropResolved(scanRunning: Bool) {
        if scanRunning {
            for (handle, transfer) in running where transfer.pending.isResolved {
                finish(handle, outcome: nil)
            }
        }
        let now = ContinuousClock.now
        guard waitingCount > 0, now - lastQueueScan >= .milliseconds(50) else { return }
        lastQueueScan = now
        for (host, queue) in waiting {
            let kept = queue.remaining.filter { transfer in
                if transfer.isResolved { return false }
                if let deadline = transfer.deadline, deadline <= now {
                    transfer.resolve(
                        .failure(
                            TransferFailure(
                                .timeout, "the check's overall time limit ran out before this request was sent")))
                    return false
                }
                return true
            }
            waitingCount -= queue.count - kept.count
            waiting[host] = kept.isEmpty ? nil : WaitingQueue(kept)
        }
    }

    private func startWaiting() {
        guard waitingCount > 0 else { return }
        for host in waiting.keys.sorted() {
            while running.count < shared.limits.totalConnections,
                runningPerHost[host, default: 0] < shared.limits.connectionsPerHost,
                let transfer = waiting[host]?.popFirst()
            {
                if waiting[host]?.count == 0 { waiting[host] = nil }
                waitingCount -= 1
                // Cancelled while queued: drop it without sending.
                if !transfer.isResolved { start(transfer, host: host) }
            }
        }
    }

    private func start(_ pending: PendingTransfer, host: String) {
        guard let handle = castprep_curl_easy_init() else {
            pending.resolve(.failure(TransferFailure(.other, "curl_easy_init failed")))
            return
        }
        let transfer = RunningTransfer(pending: pending, host: host)
        let request = pending.request
        var timeout = request.timeout
        if let deadline = pending.deadline { timeout = min(timeout, deadline - ContinuousClock.now) }
        let timeoutMilliseconds = max(1, Int(timeout.millisecondsRoundedUp))
        _ = castprep_curl_easy_setopt_string(handle, CURLOPT_URL, request.url)
        _ = castprep_curl_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        _ = castprep_curl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = castprep_curl_easy_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        _ = castprep_curl_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeoutMilliseconds)
        _ = castprep_curl_easy_setopt_long(
            handle, CURLOPT_CONNECTTIMEOUT_MS,
            max(1, Int(shared.limits.connectTimeout.millisecondsRoundedUp)))
        // A Cast device does not go through the computer's proxy; neither do the checks.
        _ = castprep_curl_easy_setopt_string(handle, CURLOPT_PROXY, "")
        _ = castprep_curl_easy_setopt_long(handle, CURLOPT_PIPEWAIT, 1)
        // "host!" makes libcurl take the value as an address, never an interface name.
        if let source = shared.sourceAddress {
            _ = castprep_curl_easy_setopt_string(handle, CURLOPT_INTERFACE, "host!" + source)
        }
        if let authorities = shared.certificateAuthorities {
            _ = castprep_curl_easy_setopt_string(handle, CURLOPT_CAINFO, authorities)
        }
        switch request.method {
        case .get: break
        case .head: _ = castprep_curl_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
        case .options: _ = castprep_curl_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, "OPTIONS")
        }
        var list: UnsafeMutablePointer<curl_slist>?
        for header in request.headers {
            if header.name.equalsIgnoringASCIICase("accept-encoding") {
                // Through curl's own option, so a compressed manifest is decoded before parsing.
                _ = castprep_curl_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, header.value)
            } else if header.name.equalsIgnoringASCIICase("user-agent") {
                _ = castprep_curl_easy_setopt_string(handle, CURLOPT_USERAGENT, header.value)
            } else {
                list = castprep_curl_slist_append(list, "\(header.name): \(header.value)")
            }
        }
        transfer.headerList = list
        if let list { _ = castprep_curl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, list) }
        _ = castprep_curl_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, transfer.errorBuffer)
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        _ = castprep_curl_easy_setopt_data_callback(
            handle, CURLOPT_HEADERFUNCTION,
            { data, size, count, context in
                guard let data, let context else { return 0 }
                let transfer = Unmanaged<RunningTransfer>.fromOpaque(context).takeUnretainedValue()
                transfer.appendHeader(UnsafeRawBufferPointer(start: data, count: size * count))
                return size * count
            })
        _ = castprep_curl_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        _ = castprep_curl_easy_setopt_data_callback(
            handle, CURLOPT_WRITEFUNCTION,
            { data, size, count, context in
                guard let data, let context else { return 0 }
                let transfer = Unmanaged<RunningTransfer>.fromOpaque(context).takeUnretainedValue()
                // Returning less than offered makes curl abort the transfer: that is how a body
                // beyond the limit (and the drain allowance) is cut off without downloading the rest.
                return transfer.appendBody(UnsafeRawBufferPointer(start: data, count: size * count)) ? size * count : 0
            })
        _ = castprep_curl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        transfer.bodyLimit = request.bodyLimit
        guard castprep_curl_multi_add_handle(multi, handle) == CURLM_OK else {
            transfer.release()
            castprep_curl_easy_cleanup(handle)
            pending.resolve(.failure(TransferFailure(.other, "curl_multi_add_handle failed")))
            return
        }
        running[handle] = transfer
        runningPerHost[host, default: 0] += 1
    }

    /// Resolves the transfers curl has finished; returns how many.
    private func collectFinished() -> Int {
        var remaining: Int32 = 0
        var count = 0
        while let message = castprep_curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            finish(handle, outcome: code)
            count += 1
        }
        return count
    }

    /// Removes a transfer from the multi handle and resolves it from its curl result; a nil
    /// result means it was already resolved (cancelled or timed out by the check).
    private func finish(_ handle: UnsafeMutableRawPointer, outcome code: CURLcode?) {
        guard let transfer = running.removeValue(forKey: handle) else { return }
        castprep_curl_multi_remove_handle(multi, handle)
        runningPerHost[transfer.host, default: 1] -= 1
        if runningPerHost[transfer.host] == 0 { runningPerHost[transfer.host] = nil }
        if let code {
            var firstByte = 0.0
            var total = 0.0
            _ = castprep_curl_easy_getinfo_double(handle, CURLINFO_STARTTRANSFER_TIME, &firstByte)
            _ = castprep_curl_easy_getinfo_double(handle, CURLINFO_TOTAL_TIME, &total)
            transfer.pending.resolve(transfer.outcome(code: code, firstByte: firstByte, total: total))
        }
        transfer.release()
        castprep_curl_easy_cleanup(handle)
    }
}

/// A FIFO with O(1) removal from the front.
struct WaitingQueue {
    private var items: [PendingTransfer]
    private var head = 0

    init(_ items: [PendingTransfer] = []) { self.items = items }

    var count: Int { items.count - head }
    var remaining: ArraySlice<PendingTransfer> { items[head...] }

    mutating func append(_ transfer: PendingTransfer) { items.append(transfer) }

    mutating func popFirst() -> PendingTransfer? {
        guard head < items.count else { return nil }
        defer {
            head += 1
            // Reclaim the consumed front now and then.
            if head > 1024, head * 2 > items.count {
                items.removeFirst(head)
                head = 0
            }
        }
        return items[head]
    }
}

/// The buffers of one running transfer, written by curl's callbacks on the loop thread.
final class RunningTransfer {
    let pending: PendingTransfer
    let host: String
    var headerList: UnsafeMutablePointer<curl_slist>?
    let errorBuffer: UnsafeMutablePointer<CChar>
    var headerBytes: [UInt8] = []
    var body: [UInt8] = []
    var bodyLimit = 0
    var isBodyTruncated = false
    /// Body bytes read but not kept.
    var drained = 0
    /// Set when the blank line ending a final (non-1xx) response head has arrived.
    var isHeadComplete = false
    /// The status code of the last status line kept in `headerBytes`.
    private var lastStatus: Int?

    /// Response heads larger than this are cut: no real server sends 256 KiB of headers.
    static let headerLimit = 256 * 1024

    init(pending: PendingTransfer, host: String) {
        self.pending = pending
        self.host = host
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE))
    }

    func appendHeader(_ bytes: UnsafeRawBufferPointer) {
        let isKept = headerBytes.count + bytes.count <= Self.headerLimit
        if bytes.starts(with: Self.statusLinePrefix) {
            // A new response head: an interim 1xx or, after a redirect curl does not follow, none.
            isHeadComplete = false
            // The status of the last head kept, as HTTPResponseHead.parse will read it; noting
            // it here spares parsing the whole head again at its blank line.
            if isKept, let status = HTTPResponseHead.statusCode(ofStatusLine: Array(bytes)[...]) { lastStatus = status }
        }
        if bytes.count <= 2, bytes.allSatisfy({ $0 == 0x0D || $0 == 0x0A }), let lastStatus, lastStatus >= 200 {
            isHeadComplete = true
        }
        guard isKept else { return }
        headerBytes.append(contentsOf: bytes)
    }

    private static let statusLinePrefix = Array("HTTP/".utf8)

    /// Body bytes read in all, kept or not, before a transfer past its body limit is cut,
    /// unless the limit is larger: small bodies (most segments on a fast server) are read to
    /// the end, which keeps the connection reusable; a cut transfer costs a new connection. A
    /// request that keeps up to this much reads no more than one that keeps nothing.
    static let drainLimit = 256 * 1024

    func appendBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let room = bodyLimit - body.count
        if bytes.count <= room {
            body.append(contentsOf: bytes)
            return true
        }
        if room > 0 { body.append(contentsOf: bytes.prefix(room)) }
        isBodyTruncated = true
        drained += bytes.count - max(0, room)
        return body.count + drained <= max(bodyLimit, Self.drainLimit)
    }

    func outcome(code: CURLcode, firstByte: Double, total: Double) -> Result<HTTPResponse, TransferFailure> {
        let message =
            errorBuffer.pointee == 0 ? String(cString: castprep_curl_easy_strerror(code)) : String(cString: errorBuffer)
        // Once a complete response head is in, a failure while reading the body (cut off on
        // purpose, or the server closing early) still leaves everything the checks need.
        let cutOnPurpose = isBodyTruncated && code == CURLE_WRITE_ERROR
        if code == CURLE_OK || isHeadComplete || cutOnPurpose, let head = HTTPResponseHead.parse(headerBytes) {
            return .success(
                HTTPResponse(
                    status: head.status, reason: head.reason, version: head.version, headers: head.headers, body: body,
                    isBodyTruncated: isBodyTruncated || code != CURLE_OK, firstByteSeconds: firstByte,
                    totalSeconds: total,
                    bodyFailure: code == CURLE_OK || cutOnPurpose
                        ? nil : TransferFailure(Self.failureKind(code), message)))
        }
        return .failure(TransferFailure(Self.failureKind(code), message))
    }

    static func failureKind(_ code: CURLcode) -> TransferFailure.Kind {
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST: .dns
        case CURLE_COULDNT_CONNECT: .connect
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM: .certificate
        case CURLE_SSL_CONNECT_ERROR: .tls
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT: .invalidURL
        case CURLE_GOT_NOTHING, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_WEIRD_SERVER_REPLY, CURLE_PARTIAL_FILE,
            CURLE_HTTP2, CURLE_HTTP2_STREAM:
            .protocolError
        default: .other
        }
    }

    /// Frees the C buffers; called once, when curl no longer uses them.
    func release() {
        castprep_curl_slist_free_all(headerList)
        headerList = nil
        errorBuffer.deallocate()
    }
}

@available(*, unavailable)
extension RunningTransfer: Sendable {}

@available(*, unavailable)
extension CurlEventLoop: Sendable {}
