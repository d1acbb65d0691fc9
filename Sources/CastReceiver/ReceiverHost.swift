public import CastModel

/// The production owner of a ``ReceiverDevice``: it serialises inputs from the transport,
/// reads the clock, runs media fetches and delivers every output on one stream.
///
/// The transport calls ``connect(sender:source:destination:)``, ``receive(sender:source:destination:namespace:payload:)``
/// and friends as frames arrive, and writes what ``outputs`` yields (routing each message by
/// its ``OutgoingMessage/sender``). ``run()`` must be running for time to pass and fetches to
/// happen; cancel its task to stop the device.
///
/// Being an actor is enough here: no handler awaits anything while holding device state,
/// because the device itself never suspends (see ``ReceiverDevice``); fetches run as child
/// tasks of ``run()`` and come back as ordinary inputs.
public actor ReceiverHost {
    private var device: ReceiverDevice
    private let fetcher: any MediaFetching
    private let clock: any ReceiverClock
    private let logSink: (@Sendable (ReceiverLogEntry) -> Void)?
    private let outputContinuation: AsyncStream<ReceiverOutput>.Continuation
    private let fetchContinuation: AsyncStream<MediaFetchRequest>.Continuation
    private let fetchRequests: AsyncStream<MediaFetchRequest>

    /// Everything the transport must act on, in order: messages, CLOSEs, faults.
    public nonisolated let outputs: AsyncStream<ReceiverOutput>

    /// Creates a host.
    ///
    /// - Parameters:
    ///   - device: the device to drive.
    ///   - fetcher: checks media during LOAD (CastReceiverRuntime's `ReceiverMediaFetcher` in
    ///     production, a scripted fetcher in tests).
    ///   - clock: ``MonotonicReceiverClock`` in production, ``ManualReceiverClock`` in tests.
    ///   - log: receives every log entry (messages in and out, events) as it happens;
    ///     `castprep receiver --log FILE` writes ``ReceiverLogEntry/jsonLine`` from here.
    public init(
        device: ReceiverDevice, fetcher: any MediaFetching, clock: any ReceiverClock,
        log: (@Sendable (ReceiverLogEntry) -> Void)? = nil
    ) {
        self.device = device
        self.fetcher = fetcher
        self.clock = clock
        self.logSink = log
        (outputs, outputContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        (fetchRequests, fetchContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    // MARK: - Inputs from the transport

    public func connect(sender: SenderID, source: String, destination: String) {
        step { $0.connect(sender: sender, source: source, destination: destination) }
    }

    public func close(sender: SenderID, source: String, destination: String) {
        step { $0.close(sender: sender, source: source, destination: destination) }
    }

    public func senderDisconnected(_ sender: SenderID) {
        step { $0.senderDisconnected(sender) }
    }

    public func receive(
        sender: SenderID, source: String, destination: String, namespace: CastNamespace, payload: String
    ) {
        step {
            $0.receive(sender: sender, source: source, destination: destination, namespace: namespace, payload: payload)
        }
    }

    /// Replaces the scripted faults.
    public func setFaults(_ faults: ReceiverFaults) {
        step { $0.setFaults(faults) }
    }

    /// Brings the device up to the clock's time now (``run()`` does this on its own).
    public func tick() {
        step { _ in [] }
    }

    /// A copy of the device's state, for inspection.
    public var snapshot: ReceiverDevice { device }

    // MARK: - Running

    /// Runs the device's timers and media fetches until the calling task is cancelled.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.runTimers() }
            for await request in fetchRequests {
                let fetcher = fetcher
                group.addTask {
                    let outcome = await fetcher.availability(of: request.media, origin: request.origin)
                    await self.fetchFinished(request, outcome: outcome)
                }
            }
            group.cancelAll()
        }
    }

    /// Sleeps until the device's next deadline, at most ``pollInterval`` at a time (an input
    /// may bring a deadline forward while it sleeps), then advances the device.
    private func runTimers() async {
        while !Task.isCancelled {
            let cap = clock.now + Self.pollInterval
            let deadline = min(device.nextDeadline ?? cap, cap)
            do {
                try await clock.sleep(until: deadline)
            } catch {
                return
            }
            tick()
        }
    }

    /// The longest the timer sleeps without looking again: the worst lateness of a status
    /// change after an input moved a deadline earlier.
    static let pollInterval: Duration = .milliseconds(100)

    private func fetchFinished(_ request: MediaFetchRequest, outcome: MediaFetchOutcome) {
        step { $0.completeFetch(request, outcome: outcome) }
    }

    /// Runs one input at the clock's current time and dispatches what comes out.
    private func step(_ input: (inout ReceiverDevice) -> [ReceiverOutput]) {
        var produced = device.advance(to: clock.now)
        produced += input(&device)
        for entry in device.takeLog() { logSink?(entry) }
        for output in produced {
            if case .fetchMedia(let request) = output {
                fetchContinuation.yield(request)
            } else {
                outputContinuation.yield(output)
            }
        }
    }

    /// Ends the output stream (the transport's read loop then ends).
    public func finish() {
        outputContinuation.finish()
        fetchContinuation.finish()
    }
}
