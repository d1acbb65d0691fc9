public import CastDiscovery
public import CastModel
import CastChannel
import HTTPCheck
public import JSONSupport

/// Asks one device, by address, who it is and what it is running — the way to learn about a
/// device discovery cannot see (another subnet, a network that drops mDNS).
///
/// Two questions go out at the same time, each bounded by ``Options/timeout``:
/// - **CASTV2**: a TLS connection to the Cast port, CONNECT and GET_STATUS to `receiver-0`; the
///   RECEIVER_STATUS says which app runs, the volume and standby. It never carries the name.
/// - **HTTP**: `GET /setup/eureka_info?params=name,device_info` on port 8008, which gives the
///   friendly name, model, manufacturer and UUID. Devices refuse it (403) to a sender on another
///   subnet, and some firmware serves it only over HTTPS on 8443, so it is best effort.
///
/// Only the CASTV2 answer makes the address a Cast device: an HTTP server answering
/// eureka_info on port 8008 while the Cast port is closed or speaks something else is not one
/// (a wrong port, or another kind of server), and says so with an error.
///
/// Nothing is thrown: what failed is in ``CastHostInspection/diagnostics``.
///
/// ```swift
/// let inspection = await CastDeviceInspector().inspect(CastHostAddress(host: "192.168.1.20"))
/// inspection.eurekaInfo?.name            // "Living Room TV"
/// inspection.runningApp?.displayName     // "YouTube"
/// ```
public struct CastDeviceInspector: Sendable {
    /// What to ask and how long to wait.
    public struct Options: Sendable, Hashable {
        /// The limit for each question (connect, TLS and reply together); 3 s by default, as
        /// go-chromecast's dial timeout.
        public var timeout: Duration
        /// The HTTP port of `/setup/eureka_info` (8008 on devices).
        public var eurekaPort: Int
        /// Whether to ask RECEIVER_STATUS over CASTV2.
        public var asksReceiverStatus: Bool
        /// Whether to fetch `/setup/eureka_info`.
        public var asksEurekaInfo: Bool

        /// Creates options; by default both questions, 3 s each, eureka_info on port 8008.
        public init(
            timeout: Duration = .seconds(3), eurekaPort: Int = 8008, asksReceiverStatus: Bool = true,
            asksEurekaInfo: Bool = true
        ) {
            self.timeout = timeout
            self.eurekaPort = eurekaPort
            self.asksReceiverStatus = asksReceiverStatus
            self.asksEurekaInfo = asksEurekaInfo
        }
    }

    /// The largest eureka_info body read; real ones are 2–5 KB.
    public static let maximumEurekaBytes = 64 * 1024

    /// What to ask and how long to wait.
    public var options: Options

    /// Creates an inspector.
    public init(options: Options = Options()) { self.options = options }

    /// Asks the device at `address` both questions at once and returns what it answered.
    public func inspect(_ address: CastHostAddress) async -> CastHostInspection {
        async let status: Answer<ReceiverStatus>? = options.asksReceiverStatus ? receiverStatus(at: address) : nil
        async let eureka: Answer<CastEurekaInfo>? = options.asksEurekaInfo ? eurekaInfo(at: address) : nil
        let (statusAnswer, eurekaAnswer) = await (status, eureka)
        var inspection = CastHostInspection(address: address, askedReceiverStatus: options.asksReceiverStatus)
        var problems: [Diagnostic] = []
        switch statusAnswer {
        case .value(let value)?: inspection.receiverStatus = value
        case .problem(let diagnostic)?: problems.append(diagnostic)
        case nil: break
        }
        switch eurekaAnswer {
        case .value(let value)?: inspection.eurekaInfo = value
        case .problem(let diagnostic)?: problems.append(diagnostic)
        case nil: break
        }
        if inspection.answered, options.asksReceiverStatus, inspection.receiverStatus == nil,
            let failure = problems.first
        {
            // eureka_info answered, CASTV2 did not: whatever serves HTTP there, the Cast port is wrong or not a device's.
            let named = inspection.eurekaInfo?.name.map { " (\"\(CastDeviceListing.printable($0))\")" } ?? ""
            var error = failure
            error.message =
                "\(failure.message); eureka_info on port \(options.eurekaPort) answered\(named), but a Cast device must also answer CASTV2 on \(address)"
            inspection.diagnostics = [error]
        } else if inspection.answered {
            // One channel is enough to list the device; the other's failure is worth a warning.
            inspection.diagnostics = problems.map { problem in
                var softened = problem
                softened.severity = .warning
                return softened
            }
        } else if let foreign = problems.first(where: { $0.code == ChannelError.Code.notCastDevice }) {
            // Something answered on the Cast port: that says more than "no answer".
            inspection.diagnostics = [foreign]
        } else if !problems.isEmpty {
            let reasons = problems.map { "\($0.message)" }.joined(separator: "; ")
            inspection.diagnostics = [
                Diagnostic(
                    .error, .devicesHostUnreachable, "no answer from a Cast device at \(address): \(reasons)",
                    fix:
                        "check the address (the Google Home app shows it under device settings), that the device is on, and that this computer can reach it (`ping \(address.host)`); a group listens on its own port, not 8009"
                )
            ]
        }
        return inspection
    }

    // MARK: - CASTV2

    private func receiverStatus(at address: CastHostAddress) async -> Answer<ReceiverStatus> {
        let started = ContinuousClock.now
        let link: CastChannelConnection
        do {
            link = try await CastChannelConnection.connect(
                host: address.host, port: address.port, timeout: options.timeout,
                options: ChannelOptions(heartbeat: nil))
        } catch {
            return .problem(
                Self.problem(
                    error, at: address,
                    fix: "check the port: devices use 8009, groups a port of their own (castprep devices shows it)"))
        }
        let deadline = started + options.timeout
        let status = await withDeadline(deadline) { () async -> Answer<ReceiverStatus> in
            do {
                try await link.openVirtualConnection(to: CastEndpointID.platformReceiver)
                try await link.send(
                    ChannelMessage(
                        sourceID: CastEndpointID.platformSender, destinationID: CastEndpointID.platformReceiver,
                        namespace: .receiver,
                        json: ReceiverGetStatusRequest(requestID: 1).jsonValue))
                for try await message in link.messages {
                    guard message.namespace == .receiver, let json = message.payloadJSON,
                        json["type"]?.stringValue == "RECEIVER_STATUS",
                        json["requestId"]?.intValue == 1
                    else { continue }
                    var findings: [Diagnostic] = []
                    if let decoded = ReceiverStatusMessage.decode(from: json, at: .root, diagnostics: &findings),
                        let status = decoded.status
                    {
                        return .value(status)
                    }
                    return .problem(
                        Diagnostic(
                            .error, .devicesCastUnavailable, "the RECEIVER_STATUS from \(address) has no status object",
                            fix:
                                "the device answered with something that is not a Cast receiver status; check the address and port"
                        ))
                }
                return .problem(
                    Diagnostic(
                        .error, .devicesCastUnavailable,
                        "\(address) closed the CASTV2 connection before answering GET_STATUS",
                        fix: "check that the address is a Cast device and the port its Cast port"))
            } catch {
                return .problem(
                    Self.problem(
                        error, at: address, fix: "check that the address is a Cast device and the port its Cast port"))
            }
        }
        await link.close()
        return status
            ?? .problem(
                Diagnostic(
                    .error, .devicesCastUnavailable,
                    "\(address) accepted the CASTV2 connection but sent no RECEIVER_STATUS within \(Self.seconds(options.timeout)) s",
                    fix: "allow more time (--timeout), or check that the port is the device's Cast port"))
    }

    // MARK: - eureka_info

    private func eurekaInfo(at address: CastHostAddress) async -> Answer<CastEurekaInfo> {
        let url = "http://\(address.urlHost):\(options.eurekaPort)/setup/eureka_info?params=name,device_info"
        let transport = HTTPTransport(
            limits: TransportLimits(connectionsPerHost: 1, totalConnections: 1, connectTimeout: options.timeout))
        let result = await transport.send(
            HTTPRequest(.get, url, bodyLimit: Self.maximumEurekaBytes, timeout: options.timeout))
        let fix =
            "the name comes from /setup/eureka_info on port \(options.eurekaPort); without it the device is listed without a name"
        let response: HTTPResponse
        switch result {
        case .failure(let failure):
            return .problem(
                Diagnostic(.error, .devicesEurekaUnavailable, "\(url) failed: \(failure.message)", fix: fix, url: url))
        case .success(let value):
            response = value
        }
        guard response.status == 200 else {
            let crossSubnet =
                response.status == 403
                ? "; a device answers 403 to senders on another subnet, so casting from here may be refused too — connect from the device's own network"
                : ""
            return .problem(
                Diagnostic(
                    .error, .devicesEurekaUnavailable, "\(url) answered HTTP \(response.status)\(crossSubnet)",
                    fix: fix, url: url))
        }
        guard !response.isBodyTruncated else {
            return .problem(
                Diagnostic(
                    .error, .devicesEurekaUnavailable, "\(url) sent more than \(Self.maximumEurekaBytes) bytes",
                    fix: fix, url: url))
        }
        let parser = JSONParser(
            limits: JSONParser.Limits(maxDepth: 32, maxStringBytes: 8192, maxDocumentBytes: Self.maximumEurekaBytes))
        guard let document = try? parser.parse(response.body), let info = CastEurekaInfo(json: document.value) else {
            return .problem(
                Diagnostic(
                    .error, .devicesEurekaUnavailable, "\(url) did not answer with a JSON object", fix: fix, url: url))
        }
        return .value(info)
    }

    // MARK: - Helpers

    /// The diagnostic for a CASTV2 failure: a peer that is no Cast device keeps the channel's
    /// code and fix, since they say what is wrong better than "unavailable".
    static func problem(_ error: any Error, at address: CastHostAddress, fix: String) -> Diagnostic {
        if let channel = error as? ChannelError, channel.code == ChannelError.Code.notCastDevice {
            return Diagnostic(.error, channel.code, channel.message, fix: channel.fix)
        }
        return Diagnostic(.error, .devicesCastUnavailable, "CASTV2 on \(address) failed: \(describe(error))", fix: fix)
    }

    static func describe(_ error: any Error) -> String {
        if let channel = error as? ChannelError { return "\(channel.message) [\(channel.code.rawValue)]" }
        return "\(error)"
    }

    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000)" : "\(Double(milliseconds) / 1000)"
    }
}

/// An answer to one question, or why there is none.
enum Answer<Value: Sendable>: Sendable {
    case value(Value)
    case problem(Diagnostic)
}

/// Runs `body` until `deadline`; nil when the deadline came first (the body is then cancelled).
func withDeadline<T: Sendable>(_ deadline: ContinuousClock.Instant, _ body: @escaping @Sendable () async -> T) async
    -> T?
{
    await withTaskGroup(of: T?.self) { group in
        group.addTask { await body() }
        group.addTask {
            try? await Task.sleep(until: deadline, clock: .continuous)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// What one device answered when asked by address.
public struct CastHostInspection: Sendable, Hashable {
    /// The address asked.
    public var address: CastHostAddress
    /// The RECEIVER_STATUS, when CASTV2 answered.
    public var receiverStatus: ReceiverStatus?
    /// `/setup/eureka_info`, when HTTP answered.
    public var eurekaInfo: CastEurekaInfo?
    /// What failed: warnings when the device answered, one error when it did not
    /// (`devices.host-unreachable` when nothing answered, the CASTV2 failure when only
    /// eureka_info did).
    public var diagnostics: [Diagnostic]
    /// Whether RECEIVER_STATUS was asked for; then only its answer makes the address a device.
    public var askedReceiverStatus: Bool

    /// Creates an inspection result.
    public init(
        address: CastHostAddress, receiverStatus: ReceiverStatus? = nil, eurekaInfo: CastEurekaInfo? = nil,
        diagnostics: [Diagnostic] = [],
        askedReceiverStatus: Bool = true
    ) {
        self.address = address
        self.receiverStatus = receiverStatus
        self.eurekaInfo = eurekaInfo
        self.diagnostics = diagnostics
        self.askedReceiverStatus = askedReceiverStatus
    }

    /// Whether either question was answered.
    public var answered: Bool { receiverStatus != nil || eurekaInfo != nil }

    /// Whether the address is a Cast device: it answered RECEIVER_STATUS, or, when that was not
    /// asked, eureka_info.
    public var isCastDevice: Bool { askedReceiverStatus ? receiverStatus != nil : eurekaInfo != nil }

    /// The app in the foreground: the first one that is not the idle screen (Backdrop).
    public var runningApp: ReceiverApplication? {
        receiverStatus?.applications?.first { $0.isIdleScreen != true }
    }
}

/// The parts of `/setup/eureka_info` that identify a device.
///
/// Read leniently: each member is taken when it has the right type and ignored otherwise, and
/// strings are cut to 256 characters, since the document comes from the network.
public struct CastEurekaInfo: Sendable, Hashable {
    /// `name` (or `device_info.name`): the friendly name.
    public var name: String?
    /// `device_info.model_name`.
    public var modelName: String?
    /// `device_info.manufacturer`.
    public var manufacturer: String?
    /// `ssdp_udn` (or `device_info.ssdp_udn`): the device UUID, the same id as TXT `id`.
    public var id: CastDeviceID?
    /// `cast_build_revision` (or `build_version`): the firmware.
    public var buildVersion: String?
    /// `device_info.capabilities.display_supported`: whether it shows video.
    public var displaySupported: Bool?
    /// `device_info.capabilities.multizone_supported`: whether it can join speaker groups.
    public var multizoneSupported: Bool?

    /// Creates a value.
    public init(
        name: String? = nil, modelName: String? = nil, manufacturer: String? = nil, id: CastDeviceID? = nil,
        buildVersion: String? = nil, displaySupported: Bool? = nil, multizoneSupported: Bool? = nil
    ) {
        self.name = name
        self.modelName = modelName
        self.manufacturer = manufacturer
        self.id = id
        self.buildVersion = buildVersion
        self.displaySupported = displaySupported
        self.multizoneSupported = multizoneSupported
    }

    /// Reads the document; nil when it is not a JSON object.
    public init?(json: JSONValue) {
        guard json.objectValue != nil else { return nil }
        func text(_ value: JSONValue?) -> String? { value?.stringValue.map { String($0.prefix(256)) } }
        let info = json["device_info"]
        name = text(json["name"]) ?? text(info?["name"])
        modelName = text(info?["model_name"])
        manufacturer = text(info?["manufacturer"])
        id = (text(json["ssdp_udn"]) ?? text(info?["ssdp_udn"])).flatMap(CastDeviceID.init)
        buildVersion = text(json["cast_build_revision"]) ?? text(json["build_version"])
        displaySupported = info?["capabilities"]?["display_supported"]?.boolValue
        multizoneSupported = info?["capabilities"]?["multizone_supported"]?.boolValue
    }
}
