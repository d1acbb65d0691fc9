import CastModel
public import CastSender
import Logging

/// Publishes Cast sessions as MPRIS players and carries out what desktop clients ask.
///
/// Each followed device gets a ``CastSender`` that joins whatever app runs there (again after a
/// reconnect or when another app starts) and never gives up reconnecting. While the device runs
/// an app session its player is on the bus; when the session ends, or the device is forgotten,
/// the player goes. Requests from the bus (Play, Seek, Volume…) become the sender's PLAY, SEEK,
/// SET_VOLUME… on that device.
///
/// ```swift
/// let service = NowPlayingService(bus: try MPRISBus())
/// await service.follow(.init(key: "living-room", name: "Living Room", endpoint: CastEndpoint(host: "192.168.1.20")))
/// await service.serveRequests()          // until the bus stops
/// ```
public actor NowPlayingService {
    /// A device to follow.
    public struct Source: Sendable, Hashable {
        /// What identifies the device across updates (its id, or its address).
        public var key: String
        /// The name shown as the player's Identity and in its bus name.
        public var name: String
        public var endpoint: CastEndpoint

        public init(key: String, name: String, endpoint: CastEndpoint) {
            self.key = key
            self.name = name
            self.endpoint = endpoint
        }
    }

    /// Something a user may want to know: a player appeared or went, a command failed.
    public enum Notice: Sendable, Hashable {
        case published(device: String, busName: String)
        case removed(device: String, busName: String)
        case failed(device: String, message: String)
        /// The device did not answer the first connection; it is tried again with growing pauses.
        case unreachable(device: String, message: String)
    }

    private struct Followed {
        var source: Source
        var sender: CastSender
        var tasks: [Task<Void, Never>]
        var published: Published?
        var reportedUnreachable = false
    }

    private struct Published {
        var busName: String
        var state: MPRISState
        var reportedAt: ContinuousClock.Instant
        var isConfirmed: Bool
    }

    private let bus: MPRISBus
    private let notify: @Sendable (Notice) -> Void
    private var followed: [String: Followed] = [:]
    private let log = Logger(.nowPlaying)

    /// How the followed devices reconnect: 0.5 s doubling to 10 s, without end.
    public static let reconnectPolicy = ReconnectPolicy(
        initialDelay: .milliseconds(500), multiplier: 2, maximumDelay: .seconds(10), maximumAttempts: nil)

    /// - Parameter notify: called for each ``Notice``, on any thread.
    public init(bus: MPRISBus, notify: @escaping @Sendable (Notice) -> Void = { _ in }) {
        self.bus = bus
        self.notify = notify
    }

    /// The devices followed now, by key.
    public var followedKeys: [String] { followed.keys.sorted() }

    /// Starts following a device (nothing happens if it is followed already).
    public func follow(
        _ source: Source,
        transportFactory: any CastSenderTransportFactory = ChannelTransportFactory(connectTimeout: .seconds(8))
    ) {
        guard followed[source.key] == nil else { return }
        let sender = CastSender(
            endpoint: source.endpoint, transportFactory: transportFactory,
            configuration: CastSenderConfiguration(requestTimeout: .seconds(10), reconnect: Self.reconnectPolicy))
        followed[source.key] = Followed(source: source, sender: sender, tasks: [], published: nil)
        log.info("following \(source.name) at \(source.endpoint)")
        let key = source.key
        let watcher = Task { await self.watch(key: key, sender: sender) }
        followed[key]?.tasks.append(watcher)
    }

    /// Stops following a device and removes its player.
    public func forget(_ key: String) async {
        guard let entry = followed.removeValue(forKey: key) else { return }
        for task in entry.tasks { task.cancel() }
        if let published = entry.published {
            bus.remove(key)
            notify(.removed(device: entry.source.name, busName: published.busName))
        }
        await entry.sender.close()
        log.info("stopped following \(entry.source.name)")
    }

    /// Stops following every device.
    public func forgetAll() async {
        for key in followed.keys.sorted() { await forget(key) }
    }

    /// Carries out the bus's requests until the bus stops.
    public func serveRequests() async {
        for await (key, request) in bus.requests {
            guard let entry = followed[key] else { continue }
            let sender = entry.sender
            let name = entry.source.name
            let notify = notify
            // Each request on its own, so a slow device never holds up another.
            Task {
                do {
                    try await Self.perform(request, on: sender)
                } catch {
                    let message = (error as? CastSenderError)?.summary ?? "\(error)"
                    notify(.failed(device: name, message: "\(request.name) failed: \(message)"))
                }
            }
        }
    }

    /// Sends what `request` means to the device.
    static func perform(_ request: MPRISRequest, on sender: CastSender) async throws {
        switch request {
        case .play: _ = try await sender.play()
        case .pause: _ = try await sender.pause()
        case .playPause:
            let playing = await sender.state.media?.playerState
            if playing == .playing || playing == .buffering {
                _ = try await sender.pause()
            } else {
                _ = try await sender.play()
            }
        case .stop: _ = try await sender.stop()
        case .next: _ = try await sender.next()
        case .previous: _ = try await sender.previous()
        case .seek(let microseconds): _ = try await sender.seek(to: MPRISState.seconds(microseconds))
        case .setVolume(let level): _ = try await sender.setVolume(level)
        case .setRate(let rate): _ = try await sender.setPlaybackRate(rate)
        }
    }

    // MARK: - Following a device

    private nonisolated func watch(key: String, sender: CastSender) async {
        let events = await sender.events()
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled {
            do {
                _ = try await sender.connect()
                break
            } catch {
                await note(key: key, connectFailure: error)
                // Backoff between first attempts; later drops are the sender's reconnect policy.
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(10))
            }
        }
        await joinIfRunning(sender)
        await refresh(key: key)
        for await event in events {
            if Task.isCancelled { break }
            switch event {
            case .receiverStatusChanged, .sessionChanged(nil), .connectionChanged(.connected), .sessionResumed:
                await joinIfRunning(sender)
            default:
                break
            }
            await refresh(key: key)
        }
    }

    private func note(key: String, connectFailure error: any Error) {
        guard let entry = followed[key] else { return }
        let message = (error as? CastSenderError)?.summary ?? "\(error)"
        log.debug("\(entry.source.name): cannot connect yet: \(message)")
        // Said once: a device that is off is tried again quietly.
        guard !entry.reportedUnreachable else { return }
        followed[key]?.reportedUnreachable = true
        notify(.unreachable(device: entry.source.name, message: "\(message); trying again until it answers"))
    }

    /// Joins the app that runs on the device when the sender is not in it yet.
    private nonisolated func joinIfRunning(_ sender: CastSender) async {
        let state = await sender.state
        guard state.connection == .connected,
            let app = (state.receiver?.applications ?? []).first(where: {
                $0.isIdleScreen != true && !($0.transportID ?? "").isEmpty
            }),
            state.session?.transportID != app.transportID
        else { return }
        _ = try? await sender.join()
    }

    /// Publishes, updates or removes the device's player to match the sender's state.
    private func refresh(key: String) async {
        guard let entry = followed[key] else { return }
        let state = await entry.sender.state
        guard followed[key] != nil else { return }
        let hasSession = state.session != nil && state.connection != .closed
        let mpris = MPRISState(device: entry.source.name, media: state.media, volume: state.receiver?.volume)
        if !hasSession {
            guard let published = followed[key]?.published else { return }
            followed[key]?.published = nil
            bus.remove(key)
            notify(.removed(device: entry.source.name, busName: published.busName))
            return
        }
        if let published = followed[key]?.published {
            guard published.isConfirmed, published.state != mpris else { return }
            let seeked = mpris.isJump(from: published.state, elapsed: .now - published.reportedAt)
            followed[key]?.published = Published(
                busName: published.busName, state: mpris, reportedAt: .now, isConfirmed: true)
            bus.update(key, state: mpris, seeked: seeked)
            return
        }
        let taken = Set(followed.values.compactMap { $0.published?.busName })
        let busName = MPRISBusName.busName(for: entry.source.name, taken: taken)
        followed[key]?.published = Published(busName: busName, state: mpris, reportedAt: .now, isConfirmed: false)
        do {
            try await bus.publish(key, busName: busName, state: mpris)
        } catch {
            if followed[key]?.published?.busName == busName { followed[key]?.published = nil }
            notify(.failed(device: entry.source.name, message: "\(error.code): \(error.message); \(error.fix)"))
            return
        }
        guard followed[key]?.published?.busName == busName else {
            // Forgotten while the name was being taken.
            bus.remove(key)
            return
        }
        followed[key]?.published?.isConfirmed = true
        notify(.published(device: entry.source.name, busName: busName))
        // Whatever changed while the name was being taken.
        await refresh(key: key)
    }
}

extension MPRISRequest {
    /// The MPRIS name of what was asked, for messages.
    var name: String {
        switch self {
        case .play: "Play"
        case .pause: "Pause"
        case .playPause: "PlayPause"
        case .stop: "Stop"
        case .next: "Next"
        case .previous: "Previous"
        case .seek: "Seek"
        case .setVolume: "Volume"
        case .setRate: "Rate"
        }
    }
}
