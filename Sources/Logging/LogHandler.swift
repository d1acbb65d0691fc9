import SystemIO

/// Where log records go: the hook a program that embeds CastPrep's libraries installs with
/// ``Log/bootstrap(filter:handler:)``, as the SDK's logger delegate receives its lines.
///
/// `log(_:)` is called on whatever thread logged, often an I/O loop's: return quickly and
/// never wait on that thread's work.
///
/// ```swift
/// struct Collector: LogHandler {
///     let records: Mutex<[LogRecord]>
///     func log(_ record: LogRecord) { records.withLock { $0.append(record) } }
/// }
/// ```
public protocol LogHandler: Sendable {
    /// Receives a record the filter admitted.
    func log(_ record: LogRecord)
    /// Writes out whatever is buffered; called before the program exits.
    func flush()
}

extension LogHandler {
    public func flush() {}
}

/// A handler made of a closure.
///
/// ```swift
/// Log.bootstrap(filter: try LogFilter(parsing: "sender=debug"),
///               handler: ClosureLogHandler { record in myLogger.write(record.line) })
/// ```
public struct ClosureLogHandler: LogHandler {
    private let body: @Sendable (LogRecord) -> Void

    /// Calls `body` for every admitted record.
    public init(_ body: @escaping @Sendable (LogRecord) -> Void) { self.body = body }

    public func log(_ record: LogRecord) { body(record) }
}

/// Writes each record as its ``LogRecord/line`` to a text sink, through a
/// ``SystemIO/BatchedLineWriter``: the logging thread only appends to a buffer, a thread of
/// the handler's own writes, so logging never makes an I/O loop or Swift's cooperative pool
/// wait for a terminal or a disk.
public final class LineLogHandler: LogHandler {
    private let writer: BatchedLineWriter
    /// Keeps a file open for as long as lines may be written to it.
    private let file: AppendingFile?

    /// Lines go to `sink` (each batch one or more whole lines, each ending in a newline).
    public init(sink: @escaping @Sendable (String) -> Void) {
        writer = BatchedLineWriter(sink: sink)
        file = nil
    }

    /// Lines are appended to the file at `path`, created when missing.
    /// - Throws: ``LogConfigurationError`` (`log.file-unwritable`) when it cannot be opened.
    public init(appendingTo path: String) throws(LogConfigurationError) {
        let opened: AppendingFile
        do {
            opened = try AppendingFile(path: path)
        } catch {
            throw LogConfigurationError(
                code: .fileUnwritable, message: "cannot open the log file \(path) for appending (\(error.reason))",
                fix: "check that the folder exists and is writable, or choose another path with --log-file")
        }
        file = opened
        // A failed write (disk full) is dropped: logging must not stop the program.
        writer = BatchedLineWriter { text in try? opened.write(text) }
    }

    deinit { writer.stop() }

    public func log(_ record: LogRecord) { writer.append(record.line) }

    public func flush() { writer.flush() }
}

/// Sends every record to each of several handlers, in order.
public struct MultiplexLogHandler: LogHandler {
    public let handlers: [any LogHandler]

    public init(_ handlers: [any LogHandler]) { self.handlers = handlers }

    public func log(_ record: LogRecord) {
        for handler in handlers { handler.log(record) }
    }

    public func flush() {
        for handler in handlers { handler.flush() }
    }
}
