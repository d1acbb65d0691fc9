internal import CSDBus
import Logging
import SystemIO

/// Why the session bus cannot be used, with a stable code and the fix.
public struct NowPlayingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var code: String
    public var message: String
    public var fix: String

    public init(code: String, message: String, fix: String) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    public var description: String { "\(code): \(message) (fix: \(fix))" }

    /// libsystemd (sd-bus) cannot be loaded.
    public static let libraryMissingCode = "nowplaying.dbus-library-missing"
    /// No session bus to connect to.
    public static let noSessionBusCode = "nowplaying.no-session-bus"
    /// The player's bus name is owned by another program.
    public static let nameTakenCode = "nowplaying.bus-name-taken"
    /// The bus thread could not start.
    public static let threadFailedCode = "nowplaying.thread-failed"
}

/// What a client asked a player to do, in Cast terms.
public enum MPRISRequest: Sendable, Hashable {
    case play, pause, playPause, stop, next, previous
    /// Go to this position, in µs (Seek and SetPosition, already resolved against the position).
    case seek(toMicroseconds: Int64)
    /// Set the device volume, 0…1.
    case setVolume(Double)
    /// Set the playback rate (within MinimumRate…MaximumRate).
    case setRate(Double)
}

/// MPRIS players on the D-Bus session bus, one bus connection (and so one well-known name) per
/// player, all served by one thread of their own (`mpris-bus`).
///
/// sd-bus objects never leave that thread: callers post ``MPRISState``s through a mailbox, and
/// clients' method calls come back as ``requests``. Methods are answered at once (MPRIS methods
/// return nothing); what they change arrives later as a new state, with `PropertiesChanged`.
public final class MPRISBus: Sendable {
    /// A player, as the caller names it.
    public typealias PlayerID = String

    /// Clients' requests, in order. One consumer; ends when the bus stops.
    public let requests: AsyncStream<(PlayerID, MPRISRequest)>
    private let mailbox: Mailbox<BusCommand>
    private let thread: IOThread

    /// Loads sd-bus and starts the bus thread.
    /// - Throws: ``NowPlayingError`` when libsystemd is missing or the thread cannot start.
    public init() throws(NowPlayingError) {
        if let reason = castprep_sdbus_load_error() {
            throw NowPlayingError(
                code: NowPlayingError.libraryMissingCode, message: String(cString: reason),
                fix: "install libsystemd: apt-get install \(CASTPREP_SDBUS_PACKAGE)")
        }
        let (stream, continuation) = AsyncStream.makeStream(
            of: (PlayerID, MPRISRequest).self, bufferingPolicy: .bufferingNewest(256))
        requests = stream
        do {
            let mailbox = try Mailbox<BusCommand>()
            self.mailbox = mailbox
            thread = try IOThread.start(named: "mpris-bus") {
                BusLoop(mailbox: mailbox, requests: continuation).run()
            }
        } catch {
            throw NowPlayingError(
                code: NowPlayingError.threadFailedCode, message: "the D-Bus thread could not start (\(error))",
                fix: "the process is out of threads or descriptors; close other programs and try again")
        }
    }

    deinit {
        mailbox.post(.stop)
        thread.join()
    }

    /// Connects to the session bus once and disconnects, so a missing bus is reported when the
    /// command starts rather than when the first session appears.
    /// - Throws: ``NowPlayingError`` (`nowplaying.no-session-bus`).
    public func checkSessionBus() async throws(NowPlayingError) {
        let outcome: NowPlayingError? = await withCheckedContinuation { continuation in
            if !mailbox.post(.check(reply: continuation)) {
                continuation.resume(
                    returning: NowPlayingError(
                        code: NowPlayingError.threadFailedCode, message: "the D-Bus thread has stopped",
                        fix: "start castprep nowplaying again"))
            }
        }
        if let outcome { throw outcome }
    }

    /// Connects a new bus connection for `id`, registers the MPRIS object and takes `busName`.
    /// - Throws: ``NowPlayingError`` when there is no session bus or the name is taken.
    public func publish(_ id: PlayerID, busName: String, state: MPRISState) async throws(NowPlayingError) {
        let outcome: NowPlayingError? = await withCheckedContinuation { continuation in
            if !mailbox.post(.publish(id, busName: busName, state: state, reply: continuation)) {
                continuation.resume(
                    returning: NowPlayingError(
                        code: NowPlayingError.threadFailedCode, message: "the D-Bus thread has stopped",
                        fix: "start castprep nowplaying again"))
            }
        }
        if let outcome { throw outcome }
    }

    /// Replaces a player's state: `PropertiesChanged` for what differs, `Seeked` when `seeked`.
    public func update(_ id: PlayerID, state: MPRISState, seeked: Bool) {
        mailbox.post(.update(id, state: state, seeked: seeked))
    }

    /// Closes a player's connection, which releases its name.
    public func remove(_ id: PlayerID) {
        mailbox.post(.remove(id))
    }

    /// Closes every player and ends the thread.
    public func stop() async {
        mailbox.post(.stop)
        let thread = thread
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            BlockingWork.start {
                thread.join()
                continuation.resume()
            }
        }
    }
}

enum BusCommand: Sendable {
    case publish(String, busName: String, state: MPRISState, reply: CheckedContinuation<NowPlayingError?, Never>)
    case update(String, state: MPRISState, seeked: Bool)
    case remove(String)
    case check(reply: CheckedContinuation<NowPlayingError?, Never>)
    case stop
}

/// The bus thread: every sd-bus object lives and dies here.
final class BusLoop {
    let reactor = Reactor()
    let mailbox: Mailbox<BusCommand>
    let requests: AsyncStream<(String, MPRISRequest)>.Continuation
    var players: [String: BusPlayer] = [:]
    var isRunning = true
    let log = Logger(.nowPlaying)

    init(mailbox: Mailbox<BusCommand>, requests: AsyncStream<(String, MPRISRequest)>.Continuation) {
        self.mailbox = mailbox
        self.requests = requests
    }

    func run() {
        reactor.bindToCurrentThread()
        _ = reactor.register(mailbox.wakeDescriptor, for: .readable) { [unowned self] _ in
            for command in mailbox.take() { handle(command) }
        }
        while isRunning {
            var wait: Int32 = -1
            for player in Array(players.values) {
                guard player.processPending() else {
                    log.warning("lost the session bus connection of \(player.busName)")
                    drop(player.id)
                    continue
                }
                player.updateInterest(in: reactor)
                let timeout = castprep_sdbus_timeout_milliseconds(player.bus)
                if timeout >= 0 { wait = wait < 0 ? timeout : min(wait, timeout) }
            }
            do {
                try reactor.runOnce(maxWait: wait < 0 ? nil : .milliseconds(Int(wait)))
            } catch {
                log.error("the D-Bus loop stopped: \(error)")
                break
            }
        }
        for command in mailbox.close() {
            if case .check(let reply) = command {
                reply.resume(
                    returning: NowPlayingError(
                        code: NowPlayingError.threadFailedCode, message: "the D-Bus thread has stopped",
                        fix: "start castprep nowplaying again"))
            }
            if case .publish(_, _, _, let reply) = command {
                reply.resume(
                    returning: NowPlayingError(
                        code: NowPlayingError.threadFailedCode, message: "the D-Bus thread has stopped",
                        fix: "start castprep nowplaying again"))
            }
        }
        for id in Array(players.keys) { drop(id) }
        requests.finish()
    }

    func handle(_ command: BusCommand) {
        switch command {
        case .publish(let id, let busName, let state, let reply):
            drop(id)
            do throws(NowPlayingError) {
                let player = try BusPlayer(id: id, busName: busName, state: state, loop: self)
                players[id] = player
                player.registration = reactor.register(player.descriptor, for: .readable) { _ in }
                log.info("published \(busName) for \(state.identity)")
                reply.resume(returning: nil)
            } catch {
                reply.resume(returning: error)
            }
        case .update(let id, let state, let seeked):
            players[id]?.update(state, seeked: seeked)
        case .remove(let id):
            drop(id)
        case .check(let reply):
            do throws(NowPlayingError) {
                try BusPlayer.openSessionBus().close()
                reply.resume(returning: nil)
            } catch {
                reply.resume(returning: error)
            }
        case .stop:
            isRunning = false
        }
    }

    func drop(_ id: String) {
        guard let player = players.removeValue(forKey: id) else { return }
        if let registration = player.registration { reactor.unregister(registration) }
        log.info("removed \(player.busName)")
        player.close()
    }

    func request(_ request: MPRISRequest, from player: BusPlayer) {
        log.debug("\(player.busName): \(request)")
        requests.yield((player.id, request))
    }
}

@available(*, unavailable)
extension BusLoop: Sendable {}
