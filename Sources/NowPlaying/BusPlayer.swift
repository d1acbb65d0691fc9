internal import CSDBus
import Logging
import SystemIO

/// One MPRIS player: its own session-bus connection, the `/org/mpris/MediaPlayer2` object and
/// the state it shows. Lives on the bus thread only.
final class BusPlayer {
    static let objectPath = "/org/mpris/MediaPlayer2"
    static let rootInterface = "org.mpris.MediaPlayer2"
    static let playerInterface = "org.mpris.MediaPlayer2.Player"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"

    let id: String
    let busName: String
    let bus: OpaquePointer
    private var slot: OpaquePointer?
    private(set) var state: MPRISState
    private var reportedAt = ContinuousClock.now
    var registration: Reactor.Registration?
    unowned let loop: BusLoop

    var descriptor: Int32 { castprep_sd_bus_get_fd(bus) }

    init(id: String, busName: String, state: MPRISState, loop: BusLoop) throws(NowPlayingError) {
        self.id = id
        self.busName = busName
        self.state = state
        self.loop = loop
        bus = try Self.openSessionBus().take()
        var createdSlot: OpaquePointer?
        let handler: sd_bus_message_handler_t = { message, userdata, error in
            guard let message, let userdata else { return 0 }
            return Unmanaged<BusPlayer>.fromOpaque(userdata).takeUnretainedValue().handle(message, error: error)
        }
        let added = castprep_sd_bus_add_object(
            bus, &createdSlot, Self.objectPath, handler, Unmanaged.passUnretained(self).toOpaque())
        guard added >= 0 else {
            _ = castprep_sd_bus_flush_close_unref(bus)
            throw NowPlayingError(
                code: NowPlayingError.noSessionBusCode,
                message: "cannot register \(Self.objectPath) (\(Self.describe(added)))",
                fix: "check the session bus with busctl --user list")
        }
        slot = createdSlot
        let requested = castprep_sd_bus_request_name(bus, busName, 0)
        guard requested >= 0 else {
            _ = castprep_sd_bus_slot_unref(slot)
            _ = castprep_sd_bus_flush_close_unref(bus)
            throw NowPlayingError(
                code: NowPlayingError.nameTakenCode,
                message: "cannot own the bus name \(busName) (\(Self.describe(requested)))",
                fix:
                    "another castprep nowplaying already publishes this device; stop it (playerctl -l lists the players)"
            )
        }
    }

    /// A session-bus connection not yet handed to a player; closed unless taken.
    final class Connection {
        private let bus: OpaquePointer
        private var isOpen = true
        init(_ bus: OpaquePointer) { self.bus = bus }
        /// The connection, now the caller's to close.
        func take() -> OpaquePointer {
            isOpen = false
            return bus
        }
        func close() {
            if isOpen { _ = castprep_sd_bus_flush_close_unref(bus) }
            isOpen = false
        }
        deinit { close() }
    }

    /// Opens a connection to the session bus (`DBUS_SESSION_BUS_ADDRESS`, else the user bus).
    static func openSessionBus() throws(NowPlayingError) -> Connection {
        var opened: OpaquePointer?
        let status = castprep_sd_bus_open_user(&opened)
        guard status >= 0, let opened else {
            throw NowPlayingError(
                code: NowPlayingError.noSessionBusCode,
                message: "cannot connect to the D-Bus session bus (\(Self.describe(status)))",
                fix:
                    "run castprep nowplaying inside a desktop session, or start a bus for it: dbus-run-session -- castprep nowplaying …"
            )
        }
        return Connection(opened)
    }

    static func describe(_ status: Int32) -> String {
        switch -status {
        case 2:
            "no such file: no session bus address (DBUS_SESSION_BUS_ADDRESS is unset and there is no user bus socket)"
        case 17: "the name is owned already"
        case 13, 1: "permission denied"
        case 111: "connection refused"
        default: "error \(-status)"
        }
    }

    /// Runs sd-bus until it has nothing left to do; false when the connection is gone.
    func processPending() -> Bool {
        for _ in 0..<1024 {
            let status = castprep_sd_bus_process(bus, nil)
            if status < 0 { return false }
            if status == 0 { return true }
        }
        return true
    }

    func updateInterest(in reactor: Reactor) {
        guard let registration else { return }
        let events = castprep_sd_bus_get_events(bus)
        var interest: Reactor.Interest = []
        if events > 0, events & castprep_sdbus_pollin != 0 { interest.insert(.readable) }
        if events > 0, events & castprep_sdbus_pollout != 0 { interest.insert(.writable) }
        reactor.update(registration, interest: interest)
    }

    func close() {
        if let slot { _ = castprep_sd_bus_slot_unref(slot) }
        slot = nil
        _ = castprep_sd_bus_flush_close_unref(bus)
    }

    // MARK: - State

    var position: Int64 { state.position(after: ContinuousClock.now - reportedAt) }

    func update(_ new: MPRISState, seeked: Bool) {
        let changed = MPRISState.changedPlayerProperties(from: state, to: new)
        let identityChanged = new.identity != state.identity
        state = new
        reportedAt = .now
        if !changed.isEmpty { emitPropertiesChanged(Self.playerInterface, changed) }
        if identityChanged { emitPropertiesChanged(Self.rootInterface, ["Identity": .string(new.identity)]) }
        if seeked { emitSeeked(new.positionMicroseconds) }
    }

    private func emitPropertiesChanged(_ interface: String, _ changed: [String: BusValue]) {
        var signal: OpaquePointer?
        guard
            castprep_sd_bus_message_new_signal(
                bus, &signal, Self.objectPath, Self.propertiesInterface, "PropertiesChanged") >= 0, let signal
        else { return }
        defer { _ = castprep_sd_bus_message_unref(signal) }
        var writer = BusWriter(message: signal)
        writer.append(.string(interface))
        writer.append(.dictionary(changed))
        writer.append(.stringArray([]))
        guard writer.isValid else { return }
        _ = castprep_sd_bus_send(bus, signal, nil)
    }

    private func emitSeeked(_ position: Int64) {
        var signal: OpaquePointer?
        guard castprep_sd_bus_message_new_signal(bus, &signal, Self.objectPath, Self.playerInterface, "Seeked") >= 0,
            let signal
        else { return }
        defer { _ = castprep_sd_bus_message_unref(signal) }
        var writer = BusWriter(message: signal)
        writer.append(.int64(position))
        guard writer.isValid else { return }
        _ = castprep_sd_bus_send(bus, signal, nil)
    }

    // MARK: - Method calls

    /// A D-Bus error to answer with.
    struct Refusal: Error {
        var name: String
        var message: String
        static func notSupported(_ message: String) -> Refusal {
            Refusal(name: "org.freedesktop.DBus.Error.NotSupported", message: message)
        }
        static func invalidArgs(_ message: String) -> Refusal {
            Refusal(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message)
        }
    }

    func handle(_ message: OpaquePointer, error replyError: UnsafeMutablePointer<sd_bus_error>?) -> Int32 {
        let interface = castprep_sd_bus_message_get_interface(message).map { String(cString: $0) }
        guard let member = castprep_sd_bus_message_get_member(message).map({ String(cString: $0) }) else { return 0 }
        do throws(Refusal) {
            guard let values = try answer(interface: interface, member: member, message: message) else { return 0 }
            var reply: OpaquePointer?
            guard castprep_sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return -12 }
            defer { _ = castprep_sd_bus_message_unref(reply) }
            var writer = BusWriter(message: reply)
            for value in values { writer.append(value) }
            guard writer.isValid else { return -12 }
            let sent = castprep_sd_bus_send(nil, reply, nil)
            return sent < 0 ? sent : 1
        } catch {
            loop.log.debug("\(busName): refused \(interface ?? "-").\(member): \(error.message)")
            return castprep_sdbus_fail(replyError, error.name, error.message)
        }
    }

    /// The reply's values, or nil when the call is not ours (sd-bus answers UnknownMethod).
    private func answer(interface: String?, member: String, message: OpaquePointer) throws(Refusal) -> [BusValue]? {
        var reader = BusReader(message: message)
        switch (interface, member) {
        case (Self.propertiesInterface, "Get"):
            let target = try reader.string()
            let name = try reader.string()
            guard let properties = properties(of: target) else {
                throw Refusal(name: "org.freedesktop.DBus.Error.UnknownInterface", message: "no interface \(target)")
            }
            guard let value = properties[name] else {
                throw Refusal(
                    name: "org.freedesktop.DBus.Error.UnknownProperty", message: "no property \(name) on \(target)")
            }
            return [.variant(value)]
        case (Self.propertiesInterface, "GetAll"):
            let target = try reader.string()
            return [.dictionary(properties(of: target) ?? [:])]
        case (Self.propertiesInterface, "Set"):
            let target = try reader.string()
            let name = try reader.string()
            try set(name, on: target, reader: &reader)
            return []
        case (Self.introspectableInterface, "Introspect"):
            return [.string(Self.introspection)]
        case (Self.rootInterface, "Raise"), (Self.rootInterface, "Quit"), (nil, "Raise"), (nil, "Quit"):
            // CanRaise and CanQuit are false: there is no window, and the device is not ours to quit.
            return []
        case (Self.playerInterface, _), (nil, _):
            guard let request = try playerRequest(member, reader: &reader) else { return nil }
            if case .noEffect = request { return [] }
            if case .send(let request) = request { loop.request(request, from: self) }
            return []
        default:
            return nil
        }
    }

    private func properties(of interface: String) -> [String: BusValue]? {
        switch interface {
        case Self.rootInterface: state.rootProperties
        case Self.playerInterface: state.playerProperties(position: position)
        default: nil
        }
    }

    private func set(_ name: String, on interface: String, reader: inout BusReader) throws(Refusal) {
        guard interface == Self.playerInterface, ["Volume", "Rate", "LoopStatus", "Shuffle"].contains(name) else {
            throw Refusal(
                name: "org.freedesktop.DBus.Error.PropertyReadOnly", message: "\(interface).\(name) cannot be set")
        }
        switch name {
        case "Volume":
            let volume = try reader.doubleVariant()
            guard volume.isFinite else { throw .invalidArgs("Volume must be a number from 0 to 1") }
            loop.request(.setVolume(min(max(volume, 0), 1)), from: self)
        case "Rate":
            let rate = try reader.doubleVariant()
            guard rate.isFinite else { throw .invalidArgs("Rate must be a number") }
            guard state.canControl, state.canPlay else { throw .notSupported("nothing plays on \(state.identity)") }
            // MPRIS: a rate of 0 acts as Pause.
            if rate == 0 {
                loop.request(.pause, from: self)
            } else {
                loop.request(.setRate(min(max(rate, MPRISState.minimumRate), MPRISState.maximumRate)), from: self)
            }
        default:
            throw .notSupported(
                "\(name) is not supported: the Cast queue's repeat mode and shuffle are set with castprep control")
        }
    }

    enum PlayerAction {
        case send(MPRISRequest)
        case noEffect
    }

    private func playerRequest(_ member: String, reader: inout BusReader) throws(Refusal) -> PlayerAction? {
        let device = state.identity
        switch member {
        case "Play":
            guard state.canPlay else {
                throw .notSupported("nothing to play on \(device): start something with castprep cast")
            }
            return .send(.play)
        case "Pause":
            guard state.canPause else { throw .notSupported("\(device) cannot pause this item (CanPause is false)") }
            return .send(.pause)
        case "PlayPause":
            guard state.canPause || state.playbackStatus != "Playing", state.canPlay else {
                throw .notSupported("\(device) cannot pause this item (CanPause is false)")
            }
            return .send(.playPause)
        case "Stop":
            guard state.canControl else { throw .notSupported("nothing plays on \(device)") }
            return .send(.stop)
        case "Next":
            guard state.canGoNext else { throw .notSupported("\(device) has no next item (CanGoNext is false)") }
            return .send(.next)
        case "Previous":
            guard state.canGoPrevious else {
                throw .notSupported("\(device) has no previous item (CanGoPrevious is false)")
            }
            return .send(.previous)
        case "Seek":
            let offset = try reader.int64()
            guard state.canSeek else { throw .notSupported("\(device) cannot seek in this item (CanSeek is false)") }
            let (target, overflow) = position.addingReportingOverflow(offset)
            let length = state.lengthMicroseconds ?? .max
            return .send(.seek(toMicroseconds: overflow ? (offset < 0 ? 0 : length) : min(max(target, 0), length)))
        case "SetPosition":
            let track = try reader.objectPath()
            let target = try reader.int64()
            guard state.canSeek else { throw .notSupported("\(device) cannot seek in this item (CanSeek is false)") }
            // MPRIS: a stale track id or a position outside the item is ignored.
            guard track == state.trackID, target >= 0, target <= (state.lengthMicroseconds ?? .max) else {
                return .noEffect
            }
            return .send(.seek(toMicroseconds: target))
        case "OpenUri":
            throw .notSupported("OpenUri is not supported: cast a URL with castprep cast URL")
        default:
            return nil
        }
    }

    /// What `Introspect` answers: the two MPRIS interfaces and Properties.
    static let introspection = """
        <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN" "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
        <node>
          <interface name="org.freedesktop.DBus.Introspectable"><method name="Introspect"><arg name="xml" type="s" direction="out"/></method></interface>
          <interface name="org.freedesktop.DBus.Peer"><method name="Ping"/><method name="GetMachineId"><arg name="id" type="s" direction="out"/></method></interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="out"/></method>
            <method name="GetAll"><arg name="interface" type="s" direction="in"/><arg name="properties" type="a{sv}" direction="out"/></method>
            <method name="Set"><arg name="interface" type="s" direction="in"/><arg name="name" type="s" direction="in"/><arg name="value" type="v" direction="in"/></method>
            <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed" type="a{sv}"/><arg name="invalidated" type="as"/></signal>
          </interface>
          <interface name="org.mpris.MediaPlayer2">
            <method name="Raise"/><method name="Quit"/>
            <property name="CanQuit" type="b" access="read"/><property name="CanRaise" type="b" access="read"/>
            <property name="HasTrackList" type="b" access="read"/><property name="Identity" type="s" access="read"/>
            <property name="SupportedUriSchemes" type="as" access="read"/><property name="SupportedMimeTypes" type="as" access="read"/>
          </interface>
          <interface name="org.mpris.MediaPlayer2.Player">
            <method name="Next"/><method name="Previous"/><method name="Pause"/><method name="PlayPause"/><method name="Stop"/><method name="Play"/>
            <method name="Seek"><arg name="Offset" type="x" direction="in"/></method>
            <method name="SetPosition"><arg name="TrackId" type="o" direction="in"/><arg name="Position" type="x" direction="in"/></method>
            <method name="OpenUri"><arg name="Uri" type="s" direction="in"/></method>
            <signal name="Seeked"><arg name="Position" type="x"/></signal>
            <property name="PlaybackStatus" type="s" access="read"/><property name="LoopStatus" type="s" access="readwrite"/>
            <property name="Rate" type="d" access="readwrite"/><property name="Shuffle" type="b" access="readwrite"/>
            <property name="Metadata" type="a{sv}" access="read"/><property name="Volume" type="d" access="readwrite"/>
            <property name="Position" type="x" access="read"/><property name="MinimumRate" type="d" access="read"/>
            <property name="MaximumRate" type="d" access="read"/><property name="CanGoNext" type="b" access="read"/>
            <property name="CanGoPrevious" type="b" access="read"/><property name="CanPlay" type="b" access="read"/>
            <property name="CanPause" type="b" access="read"/><property name="CanSeek" type="b" access="read"/>
            <property name="CanControl" type="b" access="read"/>
          </interface>
        </node>
        """
}

@available(*, unavailable)
extension BusPlayer: Sendable {}
