import Foundation
import Synchronization

/// The process's logger: one filter and one handler for every module, as the Cast SDK has one
/// `GCKLogger` with a filter and a delegate.
///
/// Nothing is logged until ``bootstrap(filter:handler:)`` installs a handler; until then, and
/// for records the filter refuses, a call costs one atomic load and the message is never built.
///
/// ```swift
/// Log.bootstrap(filter: try LogFilter(parsing: "info,channel=debug"),
///               handler: LineLogHandler { FileHandle.standardError.write(Data($0.utf8)) })
/// let log = Logger(.channel)
/// log.debug("connected to \(host)")       // 2026-12-01T19:44:16.123Z channel debug: connected to …
/// ```
public enum Log {
    private struct Installed: Sendable {
        var filter: LogFilter
        var handler: (any LogHandler)?
    }

    private static let installed = Mutex(Installed(filter: .off, handler: nil))
    /// The raw value of the least serious level that can pass, or `Int.max` when none can.
    private static let lowestLevel = Atomic<Int>(Int.max)

    /// Installs `filter` and `handler`, replacing the previous ones (whose buffered lines are
    /// flushed first). A nil handler, or a filter that admits nothing, turns logging off.
    public static func bootstrap(filter: LogFilter, handler: (any LogHandler)?) {
        let previous = installed.withLock { state -> (any LogHandler)? in
            defer { state = Installed(filter: filter, handler: handler) }
            lowestLevel.store(
                handler == nil ? Int.max : filter.lowestAdmittedLevel?.rawValue ?? Int.max, ordering: .releasing)
            return state.handler
        }
        previous?.flush()
    }

    /// The filter in force.
    public static var filter: LogFilter { installed.withLock { $0.filter } }

    /// Whether a record at `level` from `component` would be handled now.
    public static func isEnabled(_ level: LogLevel, for component: LogComponent) -> Bool {
        guard level.rawValue >= lowestLevel.load(ordering: .acquiring) else { return false }
        return installed.withLock { $0.handler != nil && $0.filter.admits(level, from: component) }
    }

    /// Logs `message` (built only when the filter admits it).
    public static func log(_ level: LogLevel, _ component: LogComponent, _ message: @autoclosure () -> String) {
        guard level.rawValue >= lowestLevel.load(ordering: .acquiring) else { return }
        let handler = installed.withLock { state -> (any LogHandler)? in
            state.filter.admits(level, from: component) ? state.handler : nil
        }
        guard let handler else { return }
        let nanoseconds = Int64((Date().timeIntervalSince1970 * 1e9).rounded())
        handler.log(
            LogRecord(nanosecondsSince1970: nanoseconds, level: level, component: component, message: message()))
    }

    /// Writes out what the handler buffers; call before exiting.
    public static func flush() {
        installed.withLock { $0.handler }?.flush()
    }
}

/// A component's view of ``Log``: `Logger(.sender).debug("…")`.
public struct Logger: Sendable, Hashable {
    /// The component every record of this logger is filed under.
    public let component: LogComponent

    public init(_ component: LogComponent) { self.component = component }

    /// Whether records at `level` would be handled now (to skip building costly context).
    public func isEnabled(_ level: LogLevel) -> Bool { Log.isEnabled(level, for: component) }

    public func trace(_ message: @autoclosure () -> String) { Log.log(.trace, component, message()) }
    public func debug(_ message: @autoclosure () -> String) { Log.log(.debug, component, message()) }
    public func info(_ message: @autoclosure () -> String) { Log.log(.info, component, message()) }
    public func warning(_ message: @autoclosure () -> String) { Log.log(.warning, component, message()) }
    public func error(_ message: @autoclosure () -> String) { Log.log(.error, component, message()) }
}
