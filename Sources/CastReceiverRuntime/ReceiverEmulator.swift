public import CastChannel
import CastDiscovery
public import CastModel
public import CastReceiver
import HTTPCheck
import JSONSupport
import Foundation
import Logging
import MediaServer
import Synchronization
public import SystemIO

/// The emulated Cast device as a running service: CASTV2 over TLS on the Cast port, the
/// `/setup/eureka_info` HTTP endpoint, and an mDNS advertisement, all driving one
/// ``CastReceiver/ReceiverHost``.
///
/// ```swift
/// var configuration = ReceiverEmulator.Configuration(identity: DeviceIdentity(friendlyName: "Test TV"))
/// configuration.castPort = 0                       // any free port
/// configuration.httpPort = 0
/// let emulator = ReceiverEmulator(configuration: configuration)
/// let endpoints = try await emulator.start()       // endpoints.castPort, endpoints.httpPort
/// …                                                // senders connect, LAUNCH, LOAD…
/// await emulator.stop()
/// ```
///
/// How the pieces meet:
/// - every accepted ``CastChannel/CastChannelConnection`` becomes a ``CastReceiver/SenderID``,
///   and each message it delivers — CONNECT, CLOSE, PING included — goes to the host, which
///   answers as a device does. The channel's automatic PONG is off: the device answers PINGs
///   itself, so the stop-pongs fault is the device's decision and nothing in the transport
///   needs to know about it. The channel still pings each sender from `Tr@n$p0rt-0` and drops
///   one that stops answering;
/// - one task writes the host's outputs in order: messages (unicast or broadcast copies) to
///   their socket, CLOSEs of virtual connections, and dropped sockets (a fault);
/// - RECEIVER_STATUS messages passing through update the advertised `rs`/`st` TXT keys when the
///   running app changes;
/// - media is fetched by ``ReceiverMediaFetcher``, which fails a LOAD where a TV would.
public final class ReceiverEmulator: Sendable {
    /// Everything the running device needs.
    public struct Configuration: Sendable {
        /// Name, model and id, shared by mDNS, eureka_info and the log.
        public var identity: DeviceIdentity
        /// The address to listen on: `0.0.0.0` (every interface, as a device), `127.0.0.1`, `::`…
        public var bindAddress: String
        /// The CASTV2 TLS port: 8009 on devices, 0 for any free port.
        public var castPort: Int
        /// The HTTP port of `/setup/eureka_info`: 8008 on devices, 0 for any free port, nil
        /// for none.
        public var httpPort: Int?
        /// The interfaces to advertise on over mDNS; nil advertises nothing. Never chosen
        /// behind the caller's back: tests pass `lo` inside their own network namespace.
        public var advertisedInterfaces: [NetworkInterface]?
        /// The device's apps, volume, timings and seed.
        public var receiver: ReceiverConfiguration
        /// Faults scripted from the start.
        public var faults: ReceiverFaults
        /// How media is fetched during LOAD.
        public var fetch: ReceiverMediaFetcher.Options
        /// Limits of the TLS server and of each connection (heartbeat, queues).
        public var server: CastChannelServer.Options
        /// Receives every log entry: messages in and out, connection events, findings.
        public var log: (@Sendable (ReceiverLogEntry) -> Void)?

        /// Creates a configuration with a device's defaults: every interface, ports 8009 and
        /// 8008, no advertisement until interfaces are given.
        public init(
            identity: DeviceIdentity, bindAddress: String = "0.0.0.0", castPort: Int = 8009, httpPort: Int? = 8008,
            advertisedInterfaces: [NetworkInterface]? = nil, receiver: ReceiverConfiguration = ReceiverConfiguration(),
            faults: ReceiverFaults = ReceiverFaults(),
            fetch: ReceiverMediaFetcher.Options = ReceiverMediaFetcher.Options(),
            server: CastChannelServer.Options = ReceiverEmulator.deviceServerOptions,
            log: (@Sendable (ReceiverLogEntry) -> Void)? = nil
        ) {
            self.identity = identity
            self.bindAddress = bindAddress
            self.castPort = castPort
            self.httpPort = httpPort
            self.advertisedInterfaces = advertisedInterfaces
            self.receiver = receiver
            self.faults = faults
            self.fetch = fetch
            self.server = server
            self.log = log
        }
    }

    /// The server options of a device: pings from `Tr@n$p0rt-0` every 5 s, and PINGs left to
    /// the device to answer (see the type's documentation).
    public static let deviceServerOptions = CastChannelServer.Options(
        channel: ChannelOptions(heartbeat: .device, answersPings: false, deliversHeartbeats: true))

    /// Where a started emulator can be reached.
    public struct Endpoints: Sendable, Hashable {
        /// The address listened on.
        public var bindAddress: String
        /// The CASTV2 TLS port.
        public var castPort: Int
        /// The eureka_info HTTP port, when served.
        public var httpPort: Int?
        /// The advertised DNS-SD instance (`Chromecast-<id>._googlecast._tcp.local`), when advertised.
        public var advertisedInstance: String?
        /// The names of the interfaces advertised on.
        public var advertisedInterfaces: [String]
    }

    public let configuration: Configuration
    /// The device brain; inspect it with ``CastReceiver/ReceiverHost/snapshot``, change its faults
    /// with ``setFaults(_:)``.
    public let host: ReceiverHost
    private let clock: MonotonicReceiverClock
    private let connections = ConnectionTable()
    private let state = Mutex(RunState())

    private struct RunState {
        var server: CastChannelServer?
        var httpServer: MediaServer?
        var responder: MDNSResponder?
        var advertisedService: MDNSService?
        var advertisedStatus = ""
        var serving: Task<Void, Never>?
        var isStarted = false
    }

    /// Creates an emulator; nothing listens until ``start()``. Once started it runs until
    /// ``stop()`` (its serving task keeps it alive, as a server should).
    public init(configuration: Configuration) {
        var configuration = configuration
        // Only when someone reads the entries: building them costs a JSON encoding per message.
        if configuration.log != nil || Log.isEnabled(.debug, for: .receiver) {
            configuration.log = Self.logging(configuration.log)
        }
        self.configuration = configuration
        var receiver = configuration.receiver
        receiver.loopbackMediaIsReachable = receiver.loopbackMediaIsReachable || configuration.fetch.loopbackIsReachable
        var fetchOptions = configuration.fetch
        fetchOptions.loopbackIsReachable = receiver.loopbackMediaIsReachable
        let clock = MonotonicReceiverClock()
        self.clock = clock
        host = ReceiverHost(
            device: ReceiverDevice(configuration: receiver, faults: configuration.faults),
            fetcher: ReceiverMediaFetcher(
                options: fetchOptions,
                transport: HTTPTransport(sourceAddress: Self.sourceAddress(bound: configuration.bindAddress))),
            clock: clock, log: configuration.log)
    }

    /// The address media requests leave from: the one the emulator is bound to, as a device's
    /// requests come from the device; the system's choice when bound to every address.
    static func sourceAddress(bound: String) -> String? {
        ["0.0.0.0", "::", "[::]", ""].contains(bound) ? nil : bound
    }

    /// Listens on the Cast port, serves eureka_info, starts advertising, and returns where.
    ///
    /// - Throws: ``ReceiverEmulatorError`` when the Cast port cannot be bound (with the
    ///   channel's `channel.*` code), or the HTTP port or the advertisement cannot start
    ///   (whatever had started is stopped again).
    public func start() async throws -> Endpoints {
        let alreadyStarted = state.withLock { state in
            defer { state.isStarted = true }
            return state.isStarted
        }
        guard !alreadyStarted else {
            throw ReceiverEmulatorError(
                code: "receiver.already-started", message: "this emulator was already started",
                fix: "create a new ReceiverEmulator")
        }
        let server = CastChannelServer(
            port: configuration.castPort, bind: configuration.bindAddress, options: configuration.server)
        let castPort: Int
        do {
            castPort = try server.start()
        } catch let error as ChannelError {
            throw ReceiverEmulatorError(
                code: error.code, message: error.message, fix: error.fix ?? "check the bind address and port")
        }
        state.withLock { $0.server = server }
        var endpoints = Endpoints(bindAddress: configuration.bindAddress, castPort: castPort, advertisedInterfaces: [])
        do {
            if let httpPort = configuration.httpPort {
                endpoints.httpPort = try await startHTTP(port: httpPort, castPort: castPort)
            }
            if let interfaces = configuration.advertisedInterfaces {
                let service = configuration.identity.advertisement(
                    port: UInt16(castPort), appIDs: configuration.receiver.installedApps.map(\.appID),
                    addresses: advertisedAddresses())
                let responder: MDNSResponder
                do {
                    responder = try MDNSResponder(advertising: service, on: interfaces)
                } catch {
                    throw ReceiverEmulatorError(
                        code: "receiver.mdns-failed", message: "cannot advertise over mDNS: \(error)",
                        fix:
                            "pass interfaces that are up and multicast-capable, or turn the advertisement off (--no-mdns)"
                    )
                }
                state.withLock {
                    $0.responder = responder
                    $0.advertisedService = service
                }
                endpoints.advertisedInstance = service.instanceFullName.description
                endpoints.advertisedInterfaces = interfaces.map(\.name)
            }
        } catch {
            await stop()
            throw error
        }
        let serving = Task { await self.serve(server) }
        state.withLock { $0.serving = serving }
        record(
            "listening on \(configuration.bindAddress):\(castPort) as \"\(configuration.identity.friendlyName)\" (id \(configuration.identity.id.hex))"
        )
        return endpoints
    }

    /// Replaces the scripted faults while running.
    public func setFaults(_ faults: ReceiverFaults) async {
        await host.setFaults(faults)
    }

    /// Says goodbye over mDNS, closes every sender's socket (flushing what was queued), stops
    /// the HTTP endpoint, and returns once everything has stopped. Safe to call twice.
    public func stop() async {
        let (server, httpServer, responder, serving) = state.withLock { state in
            defer {
                state.server = nil
                state.httpServer = nil
                state.responder = nil
                state.serving = nil
            }
            return (state.server, state.httpServer, state.responder, state.serving)
        }
        await responder?.stop()
        await server?.stop()
        serving?.cancel()
        await serving?.value
        if let httpServer { await onOwnThread { httpServer.stop() } }
        await host.finish()
    }

    // MARK: - Serving

    /// Runs the device, writes its outputs, and serves each accepted connection, until the
    /// server stops accepting (``stop()``) or the task is cancelled.
    private func serve(_ server: CastChannelServer) async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.host.run() }
            group.addTask { await self.writeOutputs() }
            var counter = 0
            for await connection in server.connections {
                counter += 1
                let sender = SenderID("\(counter)@\(connection.peerAddress)")
                connections.insert(connection, as: sender)
                group.addTask { await self.serve(connection, as: sender) }
            }
            group.cancelAll()
        }
    }

    /// Hands every message from one sender's socket to the device, then reports the socket gone.
    private func serve(_ connection: CastChannelConnection, as sender: SenderID) async {
        record("connection from \(connection.peerAddress)", sender: sender)
        var ending = "closed by the emulator"
        do {
            for try await message in connection.messages {
                switch message.payload {
                case .string(let text):
                    await host.receive(
                        sender: sender, source: message.sourceID, destination: message.destinationID,
                        namespace: message.namespace,
                        payload: text)
                case .binary(let bytes):
                    record(
                        "ignored: a binary \(message.namespace.rawValue) message of \(bytes.count) bytes; the emulator has no Google-signed device certificate, so it does not answer device authentication",
                        sender: sender)
                }
            }
        } catch let error as ChannelError {
            ending = "\(error.code.rawValue): \(error.message)"
        } catch {
            ending = "\(error)"
        }
        connections.remove(sender)
        record("connection ended (\(ending))", sender: sender)
        await host.senderDisconnected(sender)
    }

    /// Writes the device's outputs in the order it produced them.
    private func writeOutputs() async {
        for await output in host.outputs {
            switch output {
            case .message(let message):
                if message.namespace == .receiver, message.type == "RECEIVER_STATUS" {
                    noteReceiverStatus(message.payload)
                }
                guard let connection = connections[message.sender] else { continue }
                let frame = ChannelMessage(
                    sourceID: message.sourceID, destinationID: message.destinationID, namespace: message.namespace,
                    payload: .string(message.payloadText))
                do {
                    try await connection.send(frame)
                } catch {
                    record("not sent: \(message.type ?? "message") (\(error))", sender: message.sender)
                }
            case .closeVirtualConnection(let sender, let localID, let remoteID):
                try? await connections[sender]?.closeVirtualConnection(to: remoteID, from: localID)
            case .dropConnection(let sender):
                guard let connection = connections.remove(sender) else { continue }
                // Closing waits for the queue to flush; the writer must not wait with it.
                Task { await connection.close() }
            case .stopAnsweringPings, .fetchMedia:
                // The device already stopped its PONGs; fetches never reach the transport.
                continue
            }
        }
    }

    /// Re-advertises `rs`/`st` when a RECEIVER_STATUS shows another running app.
    private func noteReceiverStatus(_ payload: JSONValue) {
        let application = payload["status"]?["applications"]?[0]
        let isIdle = application == nil || application?["isIdleScreen"]?.boolValue == true
        let text =
            isIdle ? "" : application?["statusText"]?.stringValue ?? application?["displayName"]?.stringValue ?? ""
        let update = state.withLock { state -> (MDNSResponder, MDNSService)? in
            guard text != state.advertisedStatus, let responder = state.responder, let service = state.advertisedService
            else { return nil }
            state.advertisedStatus = text
            let updated = service.runningApp(text)
            state.advertisedService = updated
            return (responder, updated)
        }
        if let (responder, service) = update { responder.update(service) }
    }

    // MARK: - HTTP and mDNS

    /// Serves `/setup/eureka_info` and `/setup/icon.png` and returns the bound port.
    private func startHTTP(port: Int, castPort: Int) async throws -> Int {
        guard (0...65_535).contains(port) else {
            throw ReceiverEmulatorError(
                code: "receiver.http-port", message: "\(port) is not a TCP port", fix: "use 0...65535 (8008 on devices)"
            )
        }
        let bind = configuration.bindAddress
        let server = MediaServer(configuration: MediaServerConfiguration(bindAddress: bind, port: UInt16(port)))
        let endpoint: MediaServer.Endpoint
        do {
            endpoint = try await onOwnThread { () throws(MediaServerError) -> MediaServer.Endpoint in try server.start()
            }
        } catch {
            throw ReceiverEmulatorError(
                code: "receiver.http-failed", message: "cannot serve eureka_info: \(error.diagnostic.message)",
                fix: error.diagnostic.fix ?? "choose another --http-port (0 picks a free one)")
        }
        state.withLock { $0.httpServer = server }
        let address = Self.isWildcard(bind) ? (endpoint.addressChoice.host) : bind
        let document = configuration.identity.eurekaInfo(ipAddress: address, castPort: castPort)
        do {
            try server.publish(
                path: "/setup/eureka_info", bytes: Array(JSONWriter.compact.string(from: document).utf8),
                contentType: "application/json")
            try server.publish(path: "/setup/icon.png", bytes: DeviceIdentity.iconPNG, contentType: "image/png")
        } catch {
            throw ReceiverEmulatorError(
                code: "receiver.http-failed", message: "cannot publish eureka_info: \(error.diagnostic.message)",
                fix: "report this as a bug")
        }
        return Int(endpoint.port)
    }

    /// The addresses to announce: the bound one when it is specific, else each interface's own.
    private func advertisedAddresses() -> [IPAddress]? {
        let bind = configuration.bindAddress
        if Self.isWildcard(bind) { return nil }
        if let v4 = IPv4Address(bind) { return [.v4(v4)] }
        if let v6 = IPv6Address(bind) { return [.v6(v6)] }
        return nil
    }

    /// The log hook with every entry also handed to the logger (component `receiver`, debug):
    /// `CASTPREP_LOG=receiver=debug` shows the device's message log without `--log FILE`.
    static func logging(_ log: (@Sendable (ReceiverLogEntry) -> Void)?) -> @Sendable (ReceiverLogEntry) -> Void {
        let logger = Logger(.receiver)
        return { entry in
            log?(entry)
            if logger.isEnabled(.debug) { logger.debug(entry.jsonLine) }
        }
    }

    static func isWildcard(_ address: String) -> Bool { address == "0.0.0.0" || address == "::" }

    /// Adds an event of the runtime's own (connections, ignored binary messages) to the log.
    private func record(_ note: String, sender: SenderID? = nil) {
        configuration.log?(ReceiverLogEntry(direction: .event, time: clock.now, sender: sender, note: note))
    }
}

/// Why the emulator could not start.
public struct ReceiverEmulatorError: CodedError, Hashable {
    /// A stable code, `receiver.*`.
    public var code: DiagnosticCode
    public var message: String
    public var fix: String?

    /// Creates an error.
    public init(code: DiagnosticCode, message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// The error as a diagnostic, for printing.
    public var diagnostic: Diagnostic { Diagnostic(self) }
}

/// The open sockets by sender, for routing the device's outputs.
final class ConnectionTable: Sendable {
    private let table = Mutex<[SenderID: CastChannelConnection]>([:])

    func insert(_ connection: CastChannelConnection, as sender: SenderID) {
        table.withLock { $0[sender] = connection }
    }

    @discardableResult
    func remove(_ sender: SenderID) -> CastChannelConnection? {
        table.withLock { $0.removeValue(forKey: sender) }
    }

    subscript(sender: SenderID) -> CastChannelConnection? {
        table.withLock { $0[sender] }
    }
}

/// Runs blocking work (starting and stopping libmicrohttpd, which joins its threads) on a
/// thread of its own, never on Swift's cooperative pool.
func onOwnThread<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
    let result: Result<T, E> = await withCheckedContinuation { continuation in
        let run: @Sendable () -> Void = { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
        do {
            try IOThread.detach(named: "receiver-http", run)
        } catch {
            // No thread to spare: a blocking-work thread runs it instead.
            BlockingWork.start(run)
        }
    }
    return try result.get()
}

/// The non-throwing form of ``onOwnThread(_:)``.
func onOwnThread(_ body: @escaping @Sendable () -> Void) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let run: @Sendable () -> Void = {
            body()
            continuation.resume()
        }
        do {
            try IOThread.detach(named: "receiver-http", run)
        } catch {
            // No thread to spare: a blocking-work thread runs it instead.
            BlockingWork.start(run)
        }
    }
}
