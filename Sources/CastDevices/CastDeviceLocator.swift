public import CastDiscovery
import CastModel
public import SystemIO

/// What a command was asked to talk to: `--device NAME`, `--host IP[:PORT]`, or neither.
public enum CastDeviceQuery: Sendable, Hashable, CustomStringConvertible {
    /// Neither given: the only device on the network (an error lists the choices when there
    /// are several).
    case onlyDevice
    /// `--device NAME`: a friendly name (any case), an id, or a unique prefix of either; see
    /// ``CastDeviceMatcher``.
    case named(String)
    /// `--host IP[:PORT]`: this address, without discovery.
    case host(CastHostAddress)

    /// Builds the query from the two command-line options.
    ///
    /// - Throws: ``CastDeviceLocatorError`` `devices.device-and-host` when both are given,
    ///   `devices.host-invalid` when the host does not parse, `devices.unknown-name` for an
    ///   empty name.
    public init(device: String?, host: String?) throws(CastDeviceLocatorError) {
        switch (device, host) {
        case (_?, _?):
            throw CastDeviceLocatorError(
                Diagnostic(
                    .error, .devicesDeviceAndHost, "--device and --host both say which device to use",
                    fix: "give one: --device NAME to find it by name, or --host IP to skip discovery"))
        case (let name?, nil):
            guard !CastDeviceMatcher.fold(name).isEmpty else {
                throw CastDeviceLocatorError(
                    Diagnostic(
                        .error, .devicesUnknownName, "the device name is empty",
                        fix: "give a device name or id; castprep devices lists them"))
            }
            self = .named(name)
        case (nil, let text?):
            self = .host(try CastHostAddress(parsing: text))
        case (nil, nil):
            self = .onlyDevice
        }
    }

    public var description: String {
        switch self {
        case .onlyDevice: "the only device"
        case .named(let name): "device '\(name)'"
        case .host(let address): "host \(address)"
        }
    }
}

/// The device a command will connect to: where, and who it is as far as known.
public struct LocatedCastDevice: Sendable, Hashable, CustomStringConvertible {
    /// How the device was found.
    public enum Source: String, Sendable, Hashable {
        /// mDNS discovery.
        case discovery
        /// Given with `--host`.
        case host
    }

    /// The IP address (or host name) to connect to; a link-local IPv6 address carries its `%interface`.
    public var host: String
    /// The CASTV2 port: 8009 for devices, the advertised port for groups.
    public var port: Int
    /// The friendly name (`fn`, or eureka_info `name` for a `--host` device); nil when unknown.
    public var friendlyName: String?
    /// The device UUID; nil when unknown.
    public var id: CastDeviceID?
    /// The model (`md`, or eureka_info's `model_name`); nil when unknown.
    public var model: String?
    /// Whether it is a Cast group (several speakers playing together).
    public var isGroup: Bool
    /// How it was found.
    public var source: Source
    /// The full mDNS record, when found by discovery.
    public var record: CastDeviceRecord?

    /// Creates a located device.
    public init(
        host: String, port: Int, friendlyName: String? = nil, id: CastDeviceID? = nil, model: String? = nil,
        isGroup: Bool = false, source: Source, record: CastDeviceRecord? = nil
    ) {
        self.host = host
        self.port = port
        self.friendlyName = friendlyName
        self.id = id
        self.model = model
        self.isGroup = isGroup
        self.source = source
        self.record = record
    }

    /// A device found by discovery, at its latest address.
    public init(_ record: CastDeviceRecord) {
        self.init(
            host: record.preferredAddress ?? record.host, port: Int(record.port), friendlyName: record.friendlyName,
            id: record.id,
            model: record.model, isGroup: record.isGroup, source: .discovery, record: record)
    }

    /// Where to connect, as an address value.
    public var address: CastHostAddress { CastHostAddress(host: host, port: port) }

    /// The name to show: the friendly name, else `host:port`.
    public var displayName: String { friendlyName.flatMap { $0.isEmpty ? nil : $0 } ?? address.description }

    /// `"Living Room TV" (Chromecast) at 192.168.1.20:8009`.
    public var description: String {
        var text = friendlyName.map { "\"\($0)\"" } ?? "the device"
        if let model { text += " (\(model)\(isGroup ? ", group" : ""))" } else if isGroup { text += " (group)" }
        return text + " at \(address)"
    }
}

/// Resolves `--device NAME`, `--host IP[:PORT]` or neither to the one device a command talks to.
///
/// - `--host` skips discovery. By default the device is asked its name over HTTP
///   (`/setup/eureka_info`, bounded by ``Configuration/hostNameLookup``); a device that does not
///   answer is still returned, without a name, since the CASTV2 connection is what matters.
/// - `--device NAME` browses mDNS for up to ``Configuration/timeout`` and matches with
///   ``CastDeviceMatcher``. It stops early: at once when an id matches, and
///   ``Configuration/nameSettlingTime`` after a whole name first matches (answers to one
///   query arrive within about 120 ms of each other, so a second device with the same name
///   is still seen and reported as ambiguous). A prefix needs the whole timeout, because a
///   later answer can make it ambiguous.
/// - Neither: browses the whole timeout and returns the only device, or lists the choices.
///
/// ```swift
/// let query = try CastDeviceQuery(device: values.option("device"), host: values.option("host"))
/// let device = try await CastDeviceLocator().locate(query)
/// let link = try await CastChannelConnection.connect(host: device.host, port: device.port)
/// ```
public struct CastDeviceLocator: Sendable {
    /// How long and where to look.
    public struct Configuration: Sendable, Hashable {
        /// The default browsing time, 3 s: it covers the first two mDNS queries (sent after about
        /// 0.1 s and 1.1 s), which devices answer within 20–120 ms, with room for a slow Wi-Fi.
        /// go-chromecast's `--dns-timeout` is 3 s too; pychromecast waits 5 s.
        public static let defaultTimeout: Duration = .seconds(3)

        /// The longest browsing time; discovery stops early once the answer is known.
        public var timeout: Duration
        /// Interfaces to browse, by name; empty means every usable one
        /// (``NetworkInterface/usable(includingLoopback:)``).
        public var interfaceNames: [String]
        /// How long to ask a `--host` device its name over HTTP; nil skips the question.
        public var hostNameLookup: Duration?
        /// The HTTP port of `/setup/eureka_info` on `--host` devices.
        public var eurekaPort: Int
        /// After a whole name or id matches, how long to keep listening for a namesake.
        public var nameSettlingTime: Duration
        /// The mDNS browser's tuning.
        public var browser: CastDeviceBrowser.Configuration

        /// Creates a configuration: 3 s, every usable interface, a 1 s name lookup on port 8008
        /// for `--host`, 500 ms of settling.
        public init(
            timeout: Duration = Configuration.defaultTimeout, interfaceNames: [String] = [],
            hostNameLookup: Duration? = .seconds(1),
            eurekaPort: Int = 8008, nameSettlingTime: Duration = .milliseconds(500),
            browser: CastDeviceBrowser.Configuration = CastDeviceBrowser.Configuration()
        ) {
            self.timeout = timeout
            self.interfaceNames = interfaceNames
            self.hostNameLookup = hostNameLookup
            self.eurekaPort = eurekaPort
            self.nameSettlingTime = nameSettlingTime
            self.browser = browser
        }
    }

    /// How long and where to look.
    public var configuration: Configuration

    /// Creates a locator.
    public init(configuration: Configuration = Configuration()) { self.configuration = configuration }

    /// Finds the one device `query` means.
    ///
    /// - Throws: ``CastDeviceLocatorError``: `devices.unknown-name`, `devices.ambiguous-name`
    ///   and `devices.choose-device` carry the devices found in
    ///   ``CastDeviceLocatorError/candidates``; when nothing answered, the `discovery.*` cause
    ///   (with the browser's statistics) and ``CastDeviceLocatorError/troubleshooting``.
    public func locate(_ query: CastDeviceQuery) async throws(CastDeviceLocatorError) -> LocatedCastDevice {
        switch query {
        case .host(let address):
            return await locateHost(address)
        case .named(let name):
            let settling = configuration.nameSettlingTime
            let run = try await browse { devices in
                switch CastDeviceMatcher.match(name, in: devices) {
                case .found(_, by: .id): .now
                case .found(_, by: .name), .ambiguous(_, by: .name), .ambiguous(_, by: .id): .after(settling)
                default: .keepListening
                }
            }
            return try Self.choose(query, from: run)
        case .onlyDevice:
            return try Self.choose(query, from: try await browse { _ in .keepListening })
        }
    }

    /// Picks the device `query` means from what a browse found, by the same rules as
    /// ``locate(_:)`` (a `.host` query is returned as it is, without asking the device).
    ///
    /// - Throws: ``CastDeviceLocatorError`` as ``locate(_:)`` does.
    public static func choose(_ query: CastDeviceQuery, from run: CastDiscoveryRun) throws(CastDeviceLocatorError)
        -> LocatedCastDevice
    {
        switch query {
        case .host(let address):
            return LocatedCastDevice(
                host: address.host, port: address.port,
                isGroup: castGroupRule(model: nil, capabilities: nil, port: address.port), source: .host)
        case .named(let name):
            switch CastDeviceMatcher.match(name, in: run.devices) {
            case .found(let record, _):
                return LocatedCastDevice(record)
            case .ambiguous(let records, let rule):
                let how =
                    switch rule {
                    case .id: "id"
                    case .name: "name"
                    case .namePrefix: "the start of their names"
                    case .idPrefix: "the start of their ids"
                    }
                throw CastDeviceLocatorError(
                    Diagnostic(
                        .error, .devicesAmbiguousName,
                        "'\(name)' matches \(records.count) devices by \(how): \(list(records))",
                        fix: rule == .name || rule == .id
                            ? "give the id instead (--device ID); castprep devices shows each device's id"
                            : "give more of the name, the whole name, or the id"), candidates: run.devices)
            case .none:
                if run.devices.isEmpty { throw nothingFound(run) }
                throw CastDeviceLocatorError(
                    Diagnostic(
                        .error, .devicesUnknownName,
                        "no Cast device named '\(name)' among the \(run.devices.count) found: \(list(run.devices))",
                        fix:
                            "use one of these names (any case; the start of a name is enough when it is unique) or an id; or --host IP for a device discovery cannot see"
                    ),
                    candidates: run.devices)
            }
        case .onlyDevice:
            switch run.devices.count {
            case 0:
                throw nothingFound(run)
            case 1:
                return LocatedCastDevice(run.devices[0])
            default:
                throw CastDeviceLocatorError(
                    Diagnostic(
                        .error, .devicesChooseDevice,
                        "\(run.devices.count) Cast devices answered and none was chosen: \(list(run.devices))",
                        fix: "choose one with --device NAME (any case; a unique start of the name or id is enough)"),
                    candidates: run.devices)
            }
        }
    }

    /// Browses for the whole ``Configuration/timeout`` and returns every device found, with
    /// what the browser saw. An empty result is not an error here: see
    /// ``CastDiscoveryRun/nothingFoundDiagnostic``.
    ///
    /// - Throws: ``CastDeviceLocatorError`` with a `discovery.*` code when there is no interface
    ///   to browse or the sockets cannot be opened.
    public func discover() async throws(CastDeviceLocatorError) -> CastDiscoveryRun {
        try await browse { _ in .keepListening }
    }

    /// The interfaces ``discover()`` and ``locate(_:)`` browse.
    ///
    /// - Throws: ``CastDeviceLocatorError`` `discovery.interface` for an unknown or unusable
    ///   named interface, `discovery.no-interface` when none is usable.
    public func interfaces() throws(CastDeviceLocatorError) -> [NetworkInterface] {
        do throws(CastDiscoveryError) {
            if !configuration.interfaceNames.isEmpty {
                let named = try NetworkInterface.named(configuration.interfaceNames)
                if let unusable = named.first(where: { !$0.isUsableForMulticast }) {
                    throw CastDiscoveryError(
                        Diagnostic(
                            .error, .discoveryInterface,
                            "interface \(unusable) cannot carry mDNS: it must be up, multicast-capable and addressed",
                            fix:
                                "bring it up with multicast on (`ip link set \(unusable.name) up multicast on`) or choose another interface"
                        ))
                }
                return named
            }
            let usable = try NetworkInterface.usable()
            guard !usable.isEmpty else {
                let all = try NetworkInterface.all().map(\.name)
                throw CastDiscoveryError(
                    Diagnostic(
                        .error, .discoveryNoInterface,
                        "no network interface is up with multicast and an address to browse for Cast devices (interfaces here: \(all.joined(separator: ", ")))",
                        fix:
                            "connect to the network the devices are on, name an interface with --interface NAME, or ask a device directly with --host IP"
                    ))
            }
            return usable
        } catch {
            throw CastDeviceLocatorError(error)
        }
    }

    // MARK: - Internals

    /// When a browse may end early.
    enum StopDecision {
        case keepListening
        case now
        case after(Duration)
    }

    /// How often the browse looks at the devices found so far.
    static let pollInterval: Duration = .milliseconds(50)

    private func browse(until decide: ([CastDeviceRecord]) -> StopDecision) async throws(CastDeviceLocatorError)
        -> CastDiscoveryRun
    {
        let chosen = try interfaces()
        let browser: CastDeviceBrowser
        do {
            browser = try CastDeviceBrowser(interfaces: chosen, configuration: configuration.browser)
        } catch {
            throw CastDeviceLocatorError(error)
        }
        let started = ContinuousClock.now
        var stopAt = started + max(configuration.timeout, .zero)
        while ContinuousClock.now < stopAt {
            switch decide(browser.devices) {
            case .keepListening: break
            case .now: stopAt = ContinuousClock.now
            case .after(let delay): stopAt = min(stopAt, ContinuousClock.now + delay)
            }
            let now = ContinuousClock.now
            guard now < stopAt else { break }
            do {
                try await Task.sleep(until: min(stopAt, now + Self.pollInterval), clock: .continuous)
            } catch {
                break  // cancelled: report what was found so far
            }
        }
        let waited = ContinuousClock.now - started
        let devices = browser.devices.sorted(by: CastDeviceRecord.displayOrder)
        let statistics = browser.statistics
        await browser.stop()
        return CastDiscoveryRun(devices: devices, statistics: statistics, interfaces: chosen, waited: waited)
    }

    private func locateHost(_ address: CastHostAddress) async -> LocatedCastDevice {
        var located = LocatedCastDevice(
            host: address.host, port: address.port,
            isGroup: castGroupRule(model: nil, capabilities: nil, port: address.port), source: .host)
        guard let lookup = configuration.hostNameLookup else { return located }
        let inspector = CastDeviceInspector(
            options: CastDeviceInspector.Options(
                timeout: lookup, eurekaPort: configuration.eurekaPort, asksReceiverStatus: false, asksEurekaInfo: true))
        guard let info = await inspector.inspect(address).eurekaInfo else { return located }
        located.friendlyName = info.name
        located.id = info.id
        located.model = info.modelName
        located.isGroup = castGroupRule(model: info.modelName, capabilities: nil, port: address.port)
        return located
    }

    /// The error for a browse that found nothing at all.
    static func nothingFound(_ run: CastDiscoveryRun) -> CastDeviceLocatorError {
        // cast, control and status take the listening time as --discovery-timeout.
        var run = run
        run.timeoutOption = "--discovery-timeout"
        let diagnostic =
            run.nothingFoundDiagnostic
            ?? Diagnostic(
                .error, .discoveryNoCastDevice, "no Cast device answered",
                fix: "connect to the device directly with --host IP")
        let others = (try? NetworkInterface.usable().map(\.name)) ?? []
        return CastDeviceLocatorError(diagnostic, troubleshooting: run.troubleshooting(otherInterfaces: others))
    }

    /// `"Kitchen" (Google Home Mini, 192.168.1.21:8009, id 0d9e…), …`, at most 20 devices.
    static func list(_ devices: [CastDeviceRecord]) -> String {
        let shown = devices.prefix(20).map { device in
            var parts = [device.model.map(CastDeviceListing.printable) ?? "unknown model"]
            parts.append(
                CastHostAddress(host: device.preferredAddress ?? device.host, port: Int(device.port)).description)
            if let id = device.id { parts.append("id \(id.hex)") }
            return "\"\(CastDeviceListing.printable(device.displayName))\" (\(parts.joined(separator: ", ")))"
        }
        let more = devices.count > 20 ? ", and \(devices.count - 20) more" : ""
        return shown.joined(separator: ", ") + more
    }
}

/// Whether a device is a Cast group: model "Google Cast Group", the multizone-group capability
/// bit, or — without a model — a port other than 8009 (pychromecast's rule). The same rule as
/// ``CastDeviceRecord/isGroup``, for devices known from eureka_info.
func castGroupRule(model: String?, capabilities: CastCapabilities?, port: Int) -> Bool {
    if let model, model.lowercased() == "google cast group" { return true }
    if capabilities?.contains(.multizoneGroup) == true { return true }
    return model == nil && port != CastHostAddress.defaultPort
}
