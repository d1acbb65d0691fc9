/// How much a log record matters, from the chattiest to the most serious.
///
/// Names as the command line and `CASTPREP_LOG` spell them: `trace`, `debug`, `info`,
/// `warning` (or `warn`), `error`.
public enum LogLevel: Int, Sendable, Hashable, Comparable, CaseIterable, CustomStringConvertible {
    /// Every message in and out, byte counts, timer ticks.
    case trace
    /// What a developer follows a run by: connections, requests, state changes.
    case debug
    /// What a user may want to see: a device found, a player published.
    case info
    /// Something went wrong and was worked around.
    case warning
    /// Something failed.
    case error

    /// The level named `name` (any case; `warn` is `warning`), or nil.
    public init?(name: String) {
        switch name.lowercased() {
        case "trace": self = .trace
        case "debug": self = .debug
        case "info": self = .info
        case "warning", "warn": self = .warning
        case "error": self = .error
        default: return nil
        }
    }

    /// The level's name in log lines.
    public var name: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .warning: "warning"
        case .error: "error"
        }
    }

    public var description: String { name }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// From which level on a component's records are kept: ``off`` keeps none.
public enum LogThreshold: Sendable, Hashable, CustomStringConvertible {
    /// Nothing is logged.
    case off
    /// Records at `level` or more serious are logged.
    case from(LogLevel)

    /// Whether a record at `level` passes.
    public func admits(_ level: LogLevel) -> Bool {
        switch self {
        case .off: false
        case .from(let minimum): level >= minimum
        }
    }

    /// `off` or the level's name.
    public var description: String {
        switch self {
        case .off: "off"
        case .from(let level): level.name
        }
    }
}

/// The part of CastPrep a record comes from, as the SDK's logger filter names classes.
///
/// Open: a program that embeds the libraries may log under names of its own; ``known`` lists
/// the ones CastPrep's modules use, which `CASTPREP_LOG` accepts.
public struct LogComponent: RawRepresentable, Sendable, Hashable, Comparable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { rawValue = value }

    /// CASTV2 links: connecting, TLS, messages in and out (CastSender's transport).
    public static let channel: LogComponent = "channel"
    /// mDNS browsing: devices found, changed and gone.
    public static let discovery: LogComponent = "discovery"
    /// Receiver-style HTTP checks: requests and their answers.
    public static let http: LogComponent = "http"
    /// The sender: requests, replies, sessions, reconnects.
    public static let sender: LogComponent = "sender"
    /// The receiver emulator: its message log.
    public static let receiver: LogComponent = "receiver"
    /// `castprep nowplaying`: the D-Bus side, players appearing and going.
    public static let nowPlaying: LogComponent = "nowplaying"

    /// Every component CastPrep logs under, in the order help text lists them.
    public static let known: [LogComponent] = [.channel, .discovery, .http, .sender, .receiver, .nowPlaying]

    public var description: String { rawValue }

    public static func < (lhs: LogComponent, rhs: LogComponent) -> Bool { lhs.rawValue < rhs.rawValue }
}
