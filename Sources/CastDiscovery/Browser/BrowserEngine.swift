import Logging
import Synchronization
import SystemIO

/// The browser's cache and resolution logic, owned by its event-loop thread.
final class BrowserEngine: EventLoopEngine {
    enum Command: Sendable {
        case queryNow
        case stop
    }

    /// A cached record: identity is owner name, type and data (RFC 6762 §10).
    private struct CacheKey: Hashable {
        var name: DNSName
        var data: DNSRecordData
    }

    private struct CacheEntry {
        var record: DNSResourceRecord
        var received: ContinuousClock.Instant
        var expires: ContinuousClock.Instant
        /// Refresh queries already sent (at 80, 85, 90 and 95 % of the TTL, RFC 6762 §5.2).
        var refreshesSent = 0
        var interfaceIndex: UInt32
        /// A goodbye arrived: the record is dead but kept one second (RFC 6762 §10.1).
        var isGoodbye = false

        func isAlive(at now: ContinuousClock.Instant) -> Bool { !isGoodbye && expires > now }

        var nextRefresh: ContinuousClock.Instant? {
            guard refreshesSent < 4, !isGoodbye else { return nil }
            let fraction = 0.80 + 0.05 * Double(refreshesSent)
            return received + .milliseconds(Int(Double(record.ttl) * 1000 * fraction))
        }
    }

    /// Follow-up queries for an instance or host whose records are incomplete.
    private struct Resolution {
        var attempts = 0
        var next: ContinuousClock.Instant
    }

    let sockets: [MulticastSocket]
    private(set) var isFinished = false
    private let configuration: CastDeviceBrowser.Configuration
    private let interfaces: [NetworkInterface]
    private let shared: BrowserSharedState
    private let continuation: AsyncStream<CastDiscoveryEvent>.Continuation
    private let browsedNames: [DNSName]
    private var cache: [CacheKey: CacheEntry] = [:]
    private var published: [DNSName: CastDeviceRecord] = [:]
    private var resolutions: [DNSName: Resolution] = [:]
    private var nextQuery: ContinuousClock.Instant?
    private var queryInterval: Duration
    /// The last packets sent, to recognise them when multicast loopback brings them back.
    private var recentlySent: [[UInt8]] = []
    private var statistics = CastBrowserStatistics()
    private var random = SystemRandomNumberGenerator()
    private let encoder = DNSMessageEncoder()

    init(
        configuration: CastDeviceBrowser.Configuration, interfaces: [NetworkInterface], sockets: [MulticastSocket],
        shared: BrowserSharedState, continuation: AsyncStream<CastDiscoveryEvent>.Continuation
    ) {
        self.configuration = configuration
        self.interfaces = interfaces
        self.sockets = sockets
        self.shared = shared
        self.continuation = continuation
        self.queryInterval = configuration.firstQueryInterval
        browsedNames =
            [configuration.serviceType]
            + configuration.appIDs.map { configuration.serviceType.prepending("_sub").prepending("_\($0)") }
    }

    func start(now: ContinuousClock.Instant) {
        let range = configuration.initialQueryDelay
        let low = Int(clamping: range.lowerBound.millisecondsRoundedUp)
        let high = max(low, Int(clamping: range.upperBound.millisecondsRoundedUp))
        nextQuery = now + .milliseconds(Int.random(in: low...high, using: &random))
    }

    func handle(_ command: Command, now: ContinuousClock.Instant) {
        switch command {
        case .queryNow:
            queryInterval = configuration.firstQueryInterval
            nextQuery = now
        case .stop:
            isFinished = true
            continuation.finish()
        }
    }

    func handleOversizedDatagram() {
        statistics.packetsReceived += 1
        statistics.oversizedPackets += 1
        publishStatistics()
    }

    // MARK: - Receiving

    func handle(_ datagram: Datagram, now: ContinuousClock.Instant) {
        statistics.packetsReceived += 1
        defer { publishStatistics() }
        if recentlySent.contains(datagram.bytes) {
            statistics.ownPacketsEchoed += 1
            return
        }
        statistics.packetsFromOthers += 1
        let message: DNSMessage
        do {
            message = try DNSMessageDecoder().decode(datagram.bytes)
        } catch {
            statistics.malformedPackets[error.kind.rawValue, default: 0] += 1
            return
        }
        // RFC 6762 §6: multicast responses come from port 5353; anything else is a stray legacy reply.
        guard message.isResponse, message.opcode == 0, message.responseCode == 0, datagram.source.port == mdnsPort
        else { return }
        let interfaceIndex = datagram.interfaceIndex
        guard interfaceIndex == 0 || interfaces.contains(where: { $0.index == interfaceIndex }) else { return }

        let records = message.allRecords.filter { $0.recordClass == .internet }
        // Hosts named by SRV records, known or in this packet, make their A/AAAA records relevant.
        var hosts = Set(cache.values.compactMap { if case .srv(let srv) = $0.record.data { srv.target } else { nil } })
        for record in records where isServiceRecord(record) {
            if case .srv(let srv) = record.data { hosts.insert(srv.target) }
        }
        let relevant = records.filter { record in
            switch record.type {
            case .a, .aaaa: hosts.contains(record.name)
            default: isServiceRecord(record)
            }
        }
        guard !relevant.isEmpty else { return }
        if relevant.contains(where: isServiceRecord) { statistics.serviceResponses += 1 }
        for record in relevant { insert(record, interfaceIndex: interfaceIndex, now: now) }
        reconcile(now: now)
    }

    /// PTR records of a browsed name, and SRV/TXT records of instances of the service type.
    private func isServiceRecord(_ record: DNSResourceRecord) -> Bool {
        switch record.type {
        case .ptr: browsedNames.contains(record.name)
        case .srv, .txt:
            record.name.labels.count > configuration.serviceType.labels.count
                && record.name.parent == configuration.serviceType
        default: false
        }
    }

    private func insert(_ record: DNSResourceRecord, interfaceIndex: UInt32, now: ContinuousClock.Instant) {
        let key = CacheKey(name: record.name, data: record.data)
        if record.cacheFlush {
            // RFC 6762 §10.2: older records of this name and type go in one second; records from
            // the last second (the same burst) stay.
            for (otherKey, entry) in cache
            where otherKey != key && otherKey.name == record.name
                && entry.record.type == record.type && now - entry.received > .seconds(1)
            {
                cache[otherKey]?.expires = min(entry.expires, now + .seconds(1))
            }
        }
        if record.ttl == 0 {
            guard cache[key] != nil else { return }
            cache[key]?.isGoodbye = true
            cache[key]?.expires = now + .seconds(1)
            return
        }
        if cache[key] == nil, cache.count >= configuration.maximumCachedRecords,
            let victim = cache.min(by: { $0.value.expires < $1.value.expires })?.key
        {
            cache[victim] = nil
            statistics.cacheEvictions += 1
        }
        cache[key] = CacheEntry(
            record: record, received: now, expires: now + .seconds(Int64(record.ttl)), interfaceIndex: interfaceIndex)
    }

    // MARK: - Resolution

    /// Rebuilds the device records from the cache, publishes the differences and schedules
    /// follow-up queries for incomplete instances.
    private func reconcile(now: ContinuousClock.Instant) {
        let alive = cache.values.filter { $0.isAlive(at: now) }
        let instances = Set(
            alive.compactMap { entry -> DNSName? in
                guard browsedNames.contains(entry.record.name), case .ptr(let target) = entry.record.data,
                    target.parent == configuration.serviceType
                else { return nil }
                return target
            })
        var current: [DNSName: CastDeviceRecord] = [:]
        var wanted: Set<DNSName> = []
        for instance in instances {
            let services = alive.filter { $0.record.name == instance }
            let srvEntry = services.filter { $0.record.type == .srv }
                .min { lhs, rhs in (priority(lhs), rhs.received) < (priority(rhs), lhs.received) }
            let txtEntry = services.filter { $0.record.type == .txt }.max { $0.received < $1.received }
            guard let srvEntry, case .srv(let srv) = srvEntry.record.data else {
                wanted.insert(instance)
                continue
            }
            if txtEntry == nil { wanted.insert(instance) }
            let addressEntries = alive.filter {
                ($0.record.type == .a || $0.record.type == .aaaa) && $0.record.name == srv.target
            }
            let v4 = addressEntries.compactMap { if case .a(let address) = $0.record.data { address } else { nil } }
                .sorted()
            let v6 = addressEntries.compactMap { if case .aaaa(let address) = $0.record.data { address } else { nil } }
                .sorted()
            guard !v4.isEmpty || !v6.isEmpty else {
                wanted.insert(srv.target)
                continue
            }
            var txt = DNSTextRecord(strings: [])
            if let txtEntry, case .txt(let record) = txtEntry.record.data { txt = record }
            let interface = interfaces.first { $0.index == srvEntry.interfaceIndex }
            current[instance] = CastDeviceRecord(
                instanceName: instance.firstLabel ?? instance.description, host: srv.target.description, port: srv.port,
                ipv4Addresses: v4, ipv6Addresses: v6, txt: txt, interfaceName: interface?.name,
                interfaceIndex: interface?.index)
        }
        // Publish the snapshot before the events, so a consumer reading `devices` after an
        // event already sees the change.
        shared.state.withLock { $0.devices = current }
        for (instance, record) in current {
            if let previous = published[instance] {
                if previous != record {
                    Logger(.discovery).debug("updated \(record)")
                    continuation.yield(.updated(record, previous: previous))
                }
            } else {
                Logger(.discovery).info("found \(record)")
                continuation.yield(.found(record))
            }
        }
        for (instance, record) in published where current[instance] == nil {
            let saidGoodbye = cache.values.contains { entry in
                entry.isGoodbye && (entry.record.name == instance || entry.record.data == .ptr(instance))
            }
            Logger(.discovery).info("removed \(record.displayName) (\(saidGoodbye ? "goodbye" : "expired"))")
            continuation.yield(.removed(record, reason: saidGoodbye ? .goodbye : .expired))
        }
        published = current
        for name in wanted where resolutions[name] == nil { resolutions[name] = Resolution(next: now) }
        for name in resolutions.keys where !wanted.contains(name) { resolutions[name] = nil }
    }

    private func priority(_ entry: CacheEntry) -> UInt16 {
        if case .srv(let srv) = entry.record.data { srv.priority } else { .max }
    }

    // MARK: - Timers and queries

    func fire(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        // Expiry.
        let expired = cache.filter { $0.value.expires <= now }.map(\.key)
        for key in expired { cache[key] = nil }
        var changed = !expired.isEmpty

        // The browsing query, with known answers (RFC 6762 §7.1).
        var questions: [UInt32: [DNSQuestion]] = [:]
        var everywhere: [DNSQuestion] = []
        if let due = nextQuery, due <= now {
            everywhere = browsedNames.map { DNSQuestion(name: $0, type: .ptr) }
            nextQuery = now + queryInterval
            queryInterval = min(queryInterval * 2, configuration.maximumQueryInterval)
        }

        // Refreshes of records close to expiry, on the interface they were heard on.
        for (key, entry) in cache {
            guard let refresh = entry.nextRefresh, refresh <= now else { continue }
            cache[key]?.refreshesSent += 1
            let question = DNSQuestion(name: entry.record.name, type: entry.record.type)
            if !everywhere.contains(question) && !questions[entry.interfaceIndex, default: []].contains(question) {
                questions[entry.interfaceIndex, default: []].append(question)
            }
        }

        // Follow-ups for incomplete instances and hosts: up to three, one second apart.
        for (name, resolution) in resolutions where resolution.next <= now {
            if resolution.attempts >= 3 { continue }
            resolutions[name]?.attempts += 1
            resolutions[name]?.next = now + .seconds(1)
            let types: [DNSRecordType] = name.parent == configuration.serviceType ? [.srv, .txt] : [.a, .aaaa]
            everywhere += types.map { DNSQuestion(name: name, type: $0) }.filter { !everywhere.contains($0) }
        }

        for interface in interfaces {
            let asked =
                everywhere + questions[interface.index, default: []]
                + (interfaces.count == 1 ? questions[0, default: []] : [])
            guard !asked.isEmpty else { continue }
            sendQuery(asked, on: interface, now: now)
        }
        if changed {
            reconcile(now: now)
            changed = false
        }
        publishStatistics()

        var deadlines: [ContinuousClock.Instant] = [nextQuery].compactMap { $0 }
        deadlines += cache.values.map(\.expires)
        deadlines += cache.values.compactMap(\.nextRefresh)
        deadlines += resolutions.values.filter { $0.attempts < 3 }.map(\.next)
        return deadlines.min()
    }

    private func sendQuery(_ questions: [DNSQuestion], on interface: NetworkInterface, now: ContinuousClock.Instant) {
        // Known answers: PTR records we hold with more than half their TTL left, at most 64 so
        // the query stays well inside one packet.
        let known = cache.values.filter { entry in
            entry.isAlive(at: now) && entry.record.type == .ptr
                && questions.contains { $0.isAnswered(by: entry.record) }
                && (entry.expires - now) > .seconds(Int64(entry.record.ttl) / 2)
        }.prefix(64).map { entry in
            var record = entry.record
            record.ttl = UInt32(max(0, (entry.expires - now).components.seconds))
            return record
        }
        guard let bytes = try? encoder.encode(DNSMessage(questions: questions, answers: known)) else { return }
        for socket in sockets where socket.joined.contains(where: { $0.index == interface.index }) {
            if let error = socket.sendMulticast(bytes, on: interface) {
                statistics.sendErrors[interface.name] = errorText(error)
            } else {
                statistics.queriesSent += 1
                recentlySent.append(bytes)
                if recentlySent.count > 32 { recentlySent.removeFirst() }
            }
        }
    }

    private func publishStatistics() {
        statistics.cachedRecords = cache.count
        let snapshot = statistics
        shared.state.withLock { $0.statistics = snapshot }
    }
}
