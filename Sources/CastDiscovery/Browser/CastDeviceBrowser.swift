public import CastModel
import Synchronization
public import SystemIO

/// A change in the set of Cast devices the browser knows.
public enum CastDiscoveryEvent: Sendable, Hashable {
    /// A device was resolved for the first time (it has a host, port and address).
    case found(CastDeviceRecord)
    /// Something about a known device changed: its TXT (`rs` when the running app changes, a new
    /// `fn`), its address or port. `previous` is the record before the change.
    case updated(CastDeviceRecord, previous: CastDeviceRecord)
    /// A device went away.
    case removed(CastDeviceRecord, reason: CastRemovalReason)
}

/// Why a device was removed.
public enum CastRemovalReason: String, Sendable, Hashable {
    /// It said goodbye (its records were re-sent with TTL 0).
    case goodbye
    /// Its records expired without being refreshed (switched off, left the network).
    case expired
}

/// Counters that explain what the browser saw; ``CastDeviceBrowser/nothingFoundDiagnostic(after:)``
/// turns them into a likely cause when nothing answered.
public struct CastBrowserStatistics: Sendable, Hashable {
    /// Query packets handed to the kernel.
    public var queriesSent = 0
    /// The last send error per interface name (e.g. "Network is unreachable").
    public var sendErrors: [String: String] = [:]
    /// Every datagram received.
    public var packetsReceived = 0
    /// Our own queries coming back through multicast loopback: proof that multicast works locally.
    public var ownPacketsEchoed = 0
    /// mDNS packets from anyone else (queries or responses, any service).
    public var packetsFromOthers = 0
    /// Responses with at least one record of the browsed service.
    public var serviceResponses = 0
    /// Packets that failed to decode, by ``DNSCodecError`` code.
    public var malformedPackets: [String: Int] = [:]
    /// Datagrams over the 9000-byte limit, dropped unread.
    public var oversizedPackets = 0
    /// Records cached now.
    public var cachedRecords = 0
    /// Records evicted because the cache was full.
    public var cacheEvictions = 0

    /// Creates empty statistics.
    public init() {}
}

/// Finds Cast devices and groups with mDNS / DNS-SD on the interfaces it is given.
///
/// It queries `_googlecast._tcp.local` on every interface (first after 20–120 ms, then after 1,
/// 2, 4… seconds up to ``Configuration/maximumQueryInterval``, listing the answers it already has
/// so devices need not repeat them), listens for answers and unsolicited announcements, and
/// follows PTR → SRV/TXT → A/AAAA, asking for whatever a response left out. Records are cached
/// with their TTLs: the cache-flush bit replaces stale data (that is how an address change is
/// followed), refresh queries go out at 80–95 % of a TTL, and goodbyes (TTL 0) and expiry remove
/// devices. ``events`` reports each change.
///
/// Sockets are read on a dedicated thread; packets, the cache (``Configuration/maximumCachedRecords``)
/// and the event buffer are bounded, and malformed packets are counted and dropped.
///
/// ```swift
/// let browser = try CastDeviceBrowser(interfaces: NetworkInterface.usable())
/// for await event in browser.events {
///     if case .found(let device) = event { print(device) }
/// }
/// ```
public final class CastDeviceBrowser: Sendable {
    /// Tuning; the defaults follow RFC 6762 §5.2.
    public struct Configuration: Sendable, Hashable {
        /// The service type to browse.
        public var serviceType: DNSName = .googleCast
        /// App ids whose subtype (`_<APPID>._sub._googlecast._tcp.local`) is browsed as well.
        public var appIDs: [String] = []
        /// The first query waits a random delay in this range, so hosts starting together do not collide.
        public var initialQueryDelay: ClosedRange<Duration> = .milliseconds(20) ... .milliseconds(120)
        /// The interval after the first query; it doubles after each query.
        public var firstQueryInterval: Duration = .seconds(1)
        /// The longest interval between queries (RFC 6762 §5.2: 60 minutes).
        public var maximumQueryInterval: Duration = .seconds(3600)
        /// Records kept at most; the ones closest to expiry are evicted first.
        public var maximumCachedRecords = 4096
        /// Events buffered for a slow consumer; the oldest are dropped beyond this.
        public var eventBufferSize = 1024

        /// Creates the default configuration.
        public init() {}
    }

    /// Device changes, in order. One consumer; the stream ends when the browser stops.
    public let events: AsyncStream<CastDiscoveryEvent>
    /// The interfaces being browsed.
    public let interfaces: [NetworkInterface]
    private let mailbox: EventLoopMailbox<BrowserEngine.Command>
    private let shared: BrowserSharedState

    /// Opens the sockets on the calling thread and starts browsing on a dedicated thread.
    /// - Throws: ``CastDiscoveryError`` when `interfaces` is empty or no socket could join the group.
    public init(interfaces: [NetworkInterface], configuration: Configuration = Configuration())
        throws(CastDiscoveryError)
    {
        guard !interfaces.isEmpty else {
            throw CastDiscoveryError(
                Diagnostic(
                    .error, .discoveryNoInterface, "no network interface to browse",
                    fix: "connect to the network the Cast devices are on; `ip -br addr` lists interfaces that are up"))
        }
        self.interfaces = interfaces
        let sockets = try openSockets(for: interfaces)
        let (stream, continuation) = AsyncStream.makeStream(
            of: CastDiscoveryEvent.self, bufferingPolicy: .bufferingNewest(max(1, configuration.eventBufferSize)))
        events = stream
        shared = BrowserSharedState()
        mailbox = try EventLoopMailbox()
        let engine = BrowserEngine(
            configuration: configuration, interfaces: interfaces, sockets: sockets, shared: shared,
            continuation: continuation)
        try startEventLoop(named: "mdns-browser", engine: engine, mailbox: mailbox)
    }

    deinit { mailbox.post(.stop) }

    /// The devices resolved now, sorted by display name.
    public var devices: [CastDeviceRecord] {
        shared.state.withLock { Array($0.devices.values) }.sorted {
            ($0.displayName, $0.instanceName) < ($1.displayName, $1.instanceName)
        }
    }

    /// What the browser has seen so far.
    public var statistics: CastBrowserStatistics { shared.state.withLock { $0.statistics } }

    /// Sends a query now and restarts the query backoff (e.g. after the network changed).
    public func queryNow() { mailbox.post(.queryNow) }

    /// Stops browsing, ends ``events`` and returns when the browser thread has closed its sockets.
    public func stop() async {
        mailbox.post(.stop)
        await mailbox.waitForExit()
    }

    /// Explains, from ``statistics``, why no Cast device was found after waiting `waited`.
    ///
    /// The code tells the cases apart: queries could not be sent (`discovery.send-failed`); not even
    /// our own multicast came back (`discovery.no-multicast`); nobody else sent any mDNS packet
    /// (`discovery.no-mdns-traffic`: client isolation, another subnet, a firewall); other mDNS
    /// hosts answered but no Cast device (`discovery.no-cast-device`).
    public func nothingFoundDiagnostic(after waited: Duration) -> Diagnostic {
        Self.nothingFoundDiagnostic(statistics: statistics, interfaces: interfaces, waited: waited)
    }

    /// The diagnostic for given statistics; see ``nothingFoundDiagnostic(after:)``.
    public static func nothingFoundDiagnostic(
        statistics: CastBrowserStatistics, interfaces: [NetworkInterface], waited: Duration
    ) -> Diagnostic {
        let names = interfaces.map(\.name).joined(separator: ", ")
        let seconds = waited.components.seconds
        let queries = "\(statistics.queriesSent) mDNS quer\(statistics.queriesSent == 1 ? "y" : "ies")"
        let direct =
            "connect to the device directly with --host IP (its address is in the Google Home app under device settings)"
        if statistics.queriesSent == 0 {
            let errors = statistics.sendErrors.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(
                separator: "; ")
            return Diagnostic(
                .error, .discoverySendFailed,
                "no mDNS query could be sent on \(names)\(errors.isEmpty ? "" : " (\(errors))")",
                fix:
                    "check the multicast route (`ip route get 224.0.0.251`; add one with `ip route add 224.0.0.0/4 dev DEV`) and that the firewall allows outgoing UDP 5353; or \(direct)"
            )
        }
        if statistics.ownPacketsEchoed == 0 {
            return Diagnostic(
                .error, .discoveryNoMulticast,
                "sent \(queries) on \(names) but not even our own came back in \(seconds) s: multicast is not delivered on \(interfaces.count == 1 ? "this interface" : "these interfaces")",
                fix:
                    "turn multicast on (`ip link set DEV multicast on`), add a multicast route (`ip route add 224.0.0.0/4 dev DEV`), allow UDP 5353 in the firewall (`nft add rule inet filter input udp dport 5353 accept` or `ufw allow 5353/udp`); or \(direct)"
            )
        }
        if statistics.packetsFromOthers == 0 {
            return Diagnostic(
                .error, .discoveryNoMDNSTraffic,
                "sent \(queries) on \(names) but no other host sent a single mDNS packet in \(seconds) s; likely: the Wi-Fi isolates clients (guest network, AP/client isolation), the Cast devices are on another subnet or VLAN (mDNS does not cross routers), or a firewall drops incoming UDP 5353",
                fix:
                    "allow incoming UDP 5353 (`nft add rule inet filter input udp dport 5353 accept` or `ufw allow 5353/udp`), join the devices' network or enable an mDNS reflector between VLANs, turn off client isolation; or \(direct)"
            )
        }
        return Diagnostic(
            .error, .discoveryNoCastDevice,
            "\(statistics.packetsFromOthers) mDNS packets from other hosts on \(names) in \(seconds) s, but no Cast device answered for _googlecast._tcp; likely: the devices are off, on another subnet or VLAN (mDNS does not cross routers), or on a guest network",
            fix:
                "check the devices are on and on this network (same subnet as \(names)), or enable an mDNS reflector between VLANs; or \(direct)"
        )
    }

    /// Browses for `timeout` and returns every device found, sorted by name.
    ///
    /// - Parameters:
    ///   - timeout: how long to listen; 3 s covers the first three queries.
    ///   - interfaces: where to look; nil means ``NetworkInterface/usable(includingLoopback:)``.
    /// - Throws: ``CastDiscoveryError`` when the sockets cannot be opened, or — with the likely
    ///   cause and what to try — when nothing answered within `timeout`.
    public static func browse(
        timeout: Duration = .seconds(3), interfaces: [NetworkInterface]? = nil,
        configuration: Configuration = Configuration()
    ) async throws(CastDiscoveryError) -> [CastDeviceRecord] {
        let chosen: [NetworkInterface]
        if let interfaces { chosen = interfaces } else { chosen = try NetworkInterface.usable() }
        let browser = try CastDeviceBrowser(interfaces: chosen, configuration: configuration)
        try? await Task.sleep(for: timeout)
        let devices = browser.devices
        let diagnostic = browser.nothingFoundDiagnostic(after: timeout)
        await browser.stop()
        guard !devices.isEmpty else { throw CastDiscoveryError(diagnostic) }
        return devices
    }
}

/// State the browser thread publishes for callers.
final class BrowserSharedState: Sendable {
    struct State: Sendable {
        var devices: [DNSName: CastDeviceRecord] = [:]
        var statistics = CastBrowserStatistics()
    }

    let state = Mutex(State())
}
