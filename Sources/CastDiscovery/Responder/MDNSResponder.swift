import CastModel
public import SystemIO

/// Advertises one DNS-SD service instance over mDNS on chosen interfaces.
///
/// What it does (RFC 6762, RFC 6763):
/// - joins 224.0.0.251 (and ff02::fb where an interface has IPv6) on each interface, port 5353;
/// - announces every record twice, one second apart, when started and after ``update(_:)``;
/// - answers PTR queries for the service type, each subtype and `_services._dns-sd._udp.local`,
///   and SRV/TXT/A/AAAA queries for its own names, putting SRV, TXT, A/AAAA and NSEC in the
///   additional section so one round trip resolves everything;
/// - skips answers the asker already lists with at least half the TTL (known-answer
///   suppression), multicasts a record at most once a second per interface, and delays answers
///   holding shared PTR records by 20–120 ms (§6);
/// - replies by unicast to a QU question and to legacy queries from a port other than 5353
///   (echoing the id and the question, TTL at most 10 s, §6.7);
/// - sends a goodbye (every record with TTL 0) on ``stop()``.
///
/// Probing for name conflicts (§8) is not done: instance names carry the device UUID.
///
/// ```swift
/// let responder = try MDNSResponder(advertising: .castDevice(id: id, friendlyName: "Den"),
///                                   on: NetworkInterface.named(["lo"]))
/// responder.update(service.runningApp("YouTube"))   // re-announces the new TXT
/// await responder.stop()                            // goodbye, then the socket closes
/// ```
public final class MDNSResponder: Sendable {
    private let mailbox: EventLoopMailbox<ResponderEngine.Command>

    /// Opens the sockets on the calling thread, then starts the responder thread, which
    /// announces at once.
    /// - Throws: ``CastDiscoveryError`` when no interface is given, or the sockets cannot be
    ///   opened or joined to the group on any of them.
    public init(advertising service: MDNSService, on interfaces: [NetworkInterface]) throws(CastDiscoveryError) {
        guard !interfaces.isEmpty else {
            throw CastDiscoveryError(
                Diagnostic(
                    .error, .discoveryNoInterface, "no interface to advertise on",
                    fix: "pass the interfaces to use, e.g. NetworkInterface.usable()"))
        }
        let sockets = try openSockets(for: interfaces)
        mailbox = try EventLoopMailbox()
        let engine = ResponderEngine(service: service, interfaces: interfaces, sockets: sockets)
        try startEventLoop(named: "mdns-responder", engine: engine, mailbox: mailbox)
    }

    deinit { mailbox.post(.stop) }

    /// Replaces the advertised service (a new `rs` when the running app changes, a new address,
    /// port or name) and announces the changed records. Records that no longer exist (an old
    /// instance name or address) get a goodbye first.
    public func update(_ service: MDNSService) { mailbox.post(.update(service)) }

    /// Sends the goodbye, closes the sockets and returns when the responder thread has ended.
    public func stop() async {
        mailbox.post(.stop)
        await mailbox.waitForExit()
    }
}

/// Opens an IPv4 socket when any interface has an IPv4 address and an IPv6 socket when any has
/// an IPv6 address; fails only if neither could be opened.
func openSockets(for interfaces: [NetworkInterface]) throws(CastDiscoveryError) -> [MulticastSocket] {
    var sockets: [MulticastSocket] = []
    var firstError: CastDiscoveryError?
    for family in [MulticastSocket.Family.ipv4, .ipv6] {
        let relevant = interfaces.filter { family == .ipv4 ? !$0.ipv4Addresses.isEmpty : !$0.ipv6Addresses.isEmpty }
        guard !relevant.isEmpty else { continue }
        do {
            sockets.append(try MulticastSocket(family: family, interfaces: relevant))
        } catch {
            firstError = firstError ?? error
        }
    }
    if sockets.isEmpty {
        throw firstError
            ?? CastDiscoveryError(
                Diagnostic(
                    .error, .discoveryNoInterface,
                    "none of the interfaces (\(interfaces.map(\.name).joined(separator: ", "))) has an IPv4 or IPv6 address",
                    fix: "pick an interface with an address; `ip addr` lists them"))
    }
    return sockets
}

/// The responder's state, owned by its event-loop thread.
final class ResponderEngine: EventLoopEngine {
    enum Command: Sendable {
        case update(MDNSService)
        case stop
    }

    /// A datagram waiting for its send time.
    private struct Scheduled {
        var due: ContinuousClock.Instant
        var message: DNSMessage
        var interface: NetworkInterface
        /// nil: the mDNS group; otherwise a unicast destination.
        var destination: DatagramAddress?
    }

    let sockets: [MulticastSocket]
    private(set) var isFinished = false
    private var service: MDNSService
    private let interfaces: [NetworkInterface]
    private var scheduled: [Scheduled] = []
    private var announcementsLeft = 0
    private var nextAnnouncement: ContinuousClock.Instant?
    /// When each record was last multicast on each interface, for the one-second rule.
    private var lastMulticast: [RecordKey: ContinuousClock.Instant] = [:]
    private var random = SystemRandomNumberGenerator()
    private let encoder = DNSMessageEncoder()

    private struct RecordKey: Hashable {
        var interfaceIndex: UInt32
        var name: DNSName
        var data: DNSRecordData
    }

    init(service: MDNSService, interfaces: [NetworkInterface], sockets: [MulticastSocket]) {
        self.service = service
        self.interfaces = interfaces
        self.sockets = sockets
    }

    func start(now: ContinuousClock.Instant) { scheduleAnnouncements(now: now) }

    private func scheduleAnnouncements(now: ContinuousClock.Instant) {
        announcementsLeft = 2
        nextAnnouncement = now
    }

    func handle(_ command: Command, now: ContinuousClock.Instant) {
        switch command {
        case .update(let newService):
            let old = service
            service = newService
            for interface in interfaces {
                // A changed unique record (new TXT, new address) replaces the old one through its
                // cache-flush bit; only records nothing replaces get a goodbye.
                let current = records(for: interface).all
                let gone = records(for: interface, service: old).all.filter { record in
                    !current.contains {
                        $0.isSameRecord(as: record)
                            || ($0.cacheFlush && $0.name == record.name && $0.type == record.type)
                    }
                }
                if !gone.isEmpty { multicast(goodbye(gone), on: interface) }
            }
            // The one-second rule must not hold back the changed records.
            lastMulticast.removeAll()
            scheduleAnnouncements(now: now)
        case .stop:
            for interface in interfaces { multicast(goodbye(records(for: interface).all), on: interface) }
            isFinished = true
        }
    }

    func handleOversizedDatagram() {}

    func handle(_ datagram: Datagram, now: ContinuousClock.Instant) {
        guard let interface = interfaces.first(where: { $0.index == datagram.interfaceIndex }),
            let query = try? DNSMessageDecoder().decode(datagram.bytes),
            !query.isResponse, query.opcode == 0, !query.questions.isEmpty
        else { return }
        let set = records(for: interface)
        var answers: [DNSResourceRecord] = []
        for question in query.questions {
            for record in set.all where question.isAnswered(by: record) && !answers.contains(record) {
                // Known-answer suppression (RFC 6762 §7.1).
                let known = query.answers.contains { $0.isSameRecord(as: record) && $0.ttl >= record.ttl / 2 }
                if !known { answers.append(record) }
            }
        }
        guard !answers.isEmpty else { return }
        let additionals = set.additionals(for: answers)
        let isLegacy = datagram.source.port != mdnsPort
        if isLegacy {
            // RFC 6762 §6.7: echo id and questions, no cache-flush bits, TTL at most 10 s.
            let capped = { (record: DNSResourceRecord) -> DNSResourceRecord in
                var record = record
                record.cacheFlush = false
                record.ttl = min(record.ttl, 10)
                return record
            }
            var reply = DNSMessage.mdnsResponse(answers: answers.map(capped), additionals: additionals.map(capped))
            reply.id = query.id
            reply.questions = query.questions.map {
                DNSQuestion(name: $0.name, type: $0.type, recordClass: $0.recordClass)
            }
            send(reply, on: interface, to: datagram.source)
        } else if query.questions.allSatisfy(\.wantsUnicastResponse) {
            send(.mdnsResponse(answers: answers, additionals: additionals), on: interface, to: datagram.source)
        } else {
            // Skip what went out in the last second or is already waiting to go out, so a burst
            // of queries (or a flood) costs at most one response per record per second.
            let pending = scheduled.filter { $0.destination == nil && $0.interface.index == interface.index }.flatMap(
                \.message.answers)
            let fresh = answers.filter { record in
                if pending.contains(record) { return false }
                guard
                    let last = lastMulticast[
                        RecordKey(interfaceIndex: interface.index, name: record.name, data: record.data)]
                else { return true }
                return now - last >= .seconds(1)
            }
            guard !fresh.isEmpty, scheduled.count < 64 else { return }
            let shared = fresh.contains { !$0.cacheFlush }
            let delay: Duration = shared ? .milliseconds(Int.random(in: 20...120, using: &random)) : .zero
            scheduled.append(
                Scheduled(
                    due: now + delay, message: .mdnsResponse(answers: fresh, additionals: additionals),
                    interface: interface))
        }
    }

    func fire(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        if let due = nextAnnouncement, due <= now, announcementsLeft > 0 {
            for interface in interfaces {
                let set = records(for: interface)
                multicast(.mdnsResponse(answers: set.announced, additionals: set.negative), on: interface, now: now)
            }
            announcementsLeft -= 1
            nextAnnouncement = announcementsLeft > 0 ? now + .seconds(1) : nil
        }
        let due = scheduled.filter { $0.due <= now }
        scheduled.removeAll { $0.due <= now }
        for item in due {
            if let destination = item.destination {
                send(item.message, on: item.interface, to: destination)
            } else {
                multicast(item.message, on: item.interface, now: now)
            }
        }
        return ([nextAnnouncement].compactMap { $0 } + scheduled.map(\.due)).min()
    }

    // MARK: - Records

    /// The records for one interface, grouped the way answers and announcements need them.
    struct RecordSet {
        var pointers: [DNSResourceRecord]
        var service: [DNSResourceRecord]  // SRV, TXT
        var addresses: [DNSResourceRecord]  // A, AAAA
        var negative: [DNSResourceRecord]  // NSEC

        var all: [DNSResourceRecord] { pointers + service + addresses + negative }
        /// What an announcement carries in its answer section.
        var announced: [DNSResourceRecord] { pointers + service + addresses }

        /// RFC 6763 §12: a PTR answer brings SRV, TXT and addresses; an SRV answer brings
        /// addresses; NSEC tells which address types do not exist. Nothing already answered.
        func additionals(for answers: [DNSResourceRecord]) -> [DNSResourceRecord] {
            let instance = service.first?.name
            let pointsToInstance = answers.contains {
                if case .ptr(let target) = $0.data { target == instance } else { false }
            }
            var extra: [DNSResourceRecord] = []
            if pointsToInstance {
                extra = service + addresses + negative
            } else if answers.contains(where: { $0.type == .srv }) {
                extra = addresses + negative
            }
            return extra.filter { record in !answers.contains(record) }
        }
    }

    private func records(for interface: NetworkInterface) -> RecordSet { records(for: interface, service: service) }

    private func records(for interface: NetworkInterface, service: MDNSService) -> RecordSet {
        let instance = service.instanceFullName
        let other = service.ttls.otherRecords
        let host = service.ttls.hostRecords
        var pointers = [DNSResourceRecord(name: service.serviceType, ttl: other, data: .ptr(instance))]
        pointers += service.subtypeNames.map { DNSResourceRecord(name: $0, ttl: other, data: .ptr(instance)) }
        pointers.append(DNSResourceRecord(name: .serviceTypeEnumeration, ttl: other, data: .ptr(service.serviceType)))
        let serviceRecords = [
            DNSResourceRecord(
                name: instance, ttl: host, data: .srv(DNSServiceLocation(port: service.port, target: service.hostName)),
                cacheFlush: true),
            DNSResourceRecord(name: instance, ttl: other, data: .txt(service.txt), cacheFlush: true),
        ]
        let addresses =
            service.addresses ?? (interface.ipv4Addresses.map(IPAddress.v4) + interface.ipv6Addresses.map(IPAddress.v6))
        let addressRecords = addresses.map { address in
            switch address {
            case .v4(let v4): DNSResourceRecord(name: service.hostName, ttl: host, data: .a(v4), cacheFlush: true)
            case .v6(let v6): DNSResourceRecord(name: service.hostName, ttl: host, data: .aaaa(v6), cacheFlush: true)
            }
        }
        let negative = [
            DNSResourceRecord(
                name: service.hostName, ttl: host,
                data: .nsec(DNSNextSecure(nextName: service.hostName, types: addressRecords.map(\.type))),
                cacheFlush: true),
            DNSResourceRecord(
                name: instance, ttl: other, data: .nsec(DNSNextSecure(nextName: instance, types: [.srv, .txt])),
                cacheFlush: true),
        ]
        return RecordSet(pointers: pointers, service: serviceRecords, addresses: addressRecords, negative: negative)
    }

    private func goodbye(_ records: [DNSResourceRecord]) -> DNSMessage {
        .mdnsResponse(
            answers: records.filter { $0.type != .nsec }.map { record in
                var record = record
                record.ttl = 0
                return record
            })
    }

    // MARK: - Sending

    private func multicast(_ message: DNSMessage, on interface: NetworkInterface, now: ContinuousClock.Instant? = nil) {
        guard let bytes = try? encoder.encode(message) else { return }
        for socket in sockets where socket.joined.contains(where: { $0.index == interface.index }) {
            _ = socket.sendMulticast(bytes, on: interface)
        }
        if let now {
            for record in message.answers {
                lastMulticast[RecordKey(interfaceIndex: interface.index, name: record.name, data: record.data)] = now
            }
        }
    }

    private func send(_ message: DNSMessage, on interface: NetworkInterface, to destination: DatagramAddress) {
        guard let bytes = try? encoder.encode(message) else { return }
        let family: MulticastSocket.Family = if case .v4 = destination.address { .ipv4 } else { .ipv6 }
        for socket in sockets where socket.family == family {
            _ = socket.send(bytes, to: destination)
        }
    }
}
