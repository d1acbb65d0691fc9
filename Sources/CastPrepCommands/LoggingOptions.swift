import CommandParsing
import Logging

/// `--log-level` and `--log-file` on the commands that talk to the network, and
/// `CASTPREP_LOG` everywhere those options are.
///
/// The filter is `CASTPREP_LOG`'s, with `--log-level`'s entries applied on top; lines go to
/// stderr, or to `--log-file`. Nothing is logged when neither says anything.
enum LoggingOptions {
    static let environmentVariable = "CASTPREP_LOG"

    static let options: [OptionSpec] = [
        .option(
            "log-level", valueName: "filter",
            help:
                "Log at this level or above: trace, debug, info, warning, error or off, for all components or per component (channel=debug,http=warn; components: \(LogComponent.known.map(\.rawValue).joined(separator: ", "))). Adds to $CASTPREP_LOG."
        ),
        .option("log-file", valueName: "path", help: "Append log lines to this file instead of stderr."),
    ]

    /// The filter `CASTPREP_LOG` and `--log-level` give; nil when neither gives one.
    static func filter(_ values: ParsedValues, environment: [String: String]) throws -> LogFilter? {
        var filter: LogFilter?
        if let text = environment[environmentVariable], !text.isEmpty {
            do {
                filter = try LogFilter(parsing: text, source: environmentVariable)
            } catch {
                throw UsageError(
                    message: "\(error.code): \(error.message)", help: error.fix, commandPath: values.commandPath)
            }
        }
        if let text = values.option("log-level") {
            do {
                let option = try LogFilter(parsing: text, source: "--log-level", base: filter?.threshold ?? .off)
                filter = (filter ?? .off).applying(option, setsThreshold: true)
            } catch {
                throw UsageError(
                    message: "\(error.code): \(error.message)", help: error.fix, commandPath: values.commandPath)
            }
        }
        if filter == nil, values.option("log-file") != nil {
            // A log file without a level logs what a user may want to see.
            filter = LogFilter(threshold: .from(.info))
        }
        return filter
    }

    /// Runs `body` with the logger set up from the options, flushing it afterwards; the logger
    /// is left alone when no option and no `CASTPREP_LOG` asks for logging.
    static func withLogging(_ values: ParsedValues, io: CommandIO, _ body: () async throws -> Int32) async throws
        -> Int32
    {
        guard let filter = try filter(values, environment: io.environment), !filter.isOff else {
            return try await body()
        }
        let handler: any LogHandler
        if let path = values.option("log-file") {
            do {
                handler = try LineLogHandler(appendingTo: path)
            } catch {
                throw UsageError(
                    message: "\(error.code): \(error.message)", help: error.fix, commandPath: values.commandPath)
            }
        } else {
            handler = LineLogHandler { io.writeError($0) }
        }
        Log.bootstrap(filter: filter, handler: handler)
        defer {
            Log.flush()
            Log.bootstrap(filter: .off, handler: nil)
        }
        return try await body()
    }
}

extension CommandSpec {
    /// The command with `--log-level` and `--log-file`, its run set up with ``LoggingOptions``.
    var withLogging: CommandSpec {
        var spec = self
        spec.options += LoggingOptions.options
        if let run = spec.run {
            spec.run = { values, io in
                try await LoggingOptions.withLogging(values, io: io) { try await run(values, io) }
            }
        }
        return spec
    }
}
