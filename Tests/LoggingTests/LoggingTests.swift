import Foundation
import Logging
import Synchronization
import Testing

@Suite("log filters")
struct LogFilterTests {
    @Test(
        "filters parse",
        arguments: [
            ("debug", "debug"),
            ("WARN", "warning"),
            ("channel=debug,discovery=info,http=warn", "off,channel=debug,discovery=info,http=warning"),
            ("info, channel = trace ,", "info,channel=trace"),  // spaces and an empty entry are ignored
            ("channel=debug,info", "info,channel=debug"),  // a bare level anywhere sets the rest
            ("debug,http=off", "debug,http=off"),
            ("", "off"),
            ("none", "off"),
        ])
    func parses(text: String, expected: String) throws {
        #expect(try LogFilter(parsing: text).description == expected)
    }

    @Test(
        "bad filters name the entry, with a code and a did-you-mean",
        arguments: [
            ("chanel=debug", "log.unknown-component", "did you mean 'channel'?"),
            ("disco=info", "log.unknown-component", "did you mean 'discovery'?"),
            ("network=info", "log.unknown-component", "unknown component 'network'"),
            ("verbose", "log.unknown-level", "unknown log level 'verbose'"),
            ("channel=debg", "log.unknown-level", "did you mean 'debug'?"),
            ("=debug", "log.malformed-filter", "needs a component and a level"),
            ("channel=", "log.malformed-filter", "needs a component and a level"),
            ("http=\u{1B}[31m", "log.unknown-level", "'?[31m'"),  // control characters are not echoed
        ])
    func refuses(text: String, code: String, message: String) {
        #expect {
            try LogFilter(parsing: text)
        } throws: { error in
            guard let error = error as? LogConfigurationError else { return false }
            return error.code.rawValue == code && error.message.contains(message)
                && error.message.contains("CASTPREP_LOG") && !error.fix.isEmpty
        }
    }

    @Test("a filter longer than 4 KiB is refused")
    func tooLong() {
        #expect(throws: LogConfigurationError.self) { try LogFilter(parsing: String(repeating: "debug,", count: 1000)) }
    }

    @Test("thresholds: per component, then the default")
    func admits() throws {
        let filter = try LogFilter(parsing: "warning,channel=debug,http=off")
        #expect(filter.admits(.debug, from: .channel))
        #expect(!filter.admits(.trace, from: .channel))
        #expect(!filter.admits(.info, from: .discovery))
        #expect(filter.admits(.error, from: .discovery))
        #expect(!filter.admits(.error, from: .http))
        #expect(filter.lowestAdmittedLevel == .debug)
        #expect(LogFilter.off.isOff)
    }

    @Test("--log-level entries apply on top of CASTPREP_LOG")
    func layering() throws {
        let environment = try LogFilter(parsing: "info,http=debug")
        let option = try LogFilter(parsing: "channel=trace", source: "--log-level", base: environment.threshold)
        #expect(environment.applying(option, setsThreshold: true).description == "info,channel=trace,http=debug")
    }
}

@Suite("log lines")
struct LogRecordTests {
    @Test(
        "UTC time with milliseconds",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00.000Z"),
            (1_700_000_000_123_456_789, "2023-11-14T22:13:20.123Z"),
            (951_782_400_000_000_000, "2000-02-29T00:00:00.000Z"),  // a leap day
            (-1_000_000, "1969-12-31T23:59:59.999Z"),
            (4_102_444_799_999_000_000, "2099-12-31T23:59:59.999Z"),
        ])
    func timestamps(nanoseconds: Int64, expected: String) {
        #expect(LogRecord.timestamp(nanoseconds) == expected)
    }

    @Test("one line: time, component, level, message")
    func line() {
        let record = LogRecord(
            nanosecondsSince1970: 0, level: .debug, component: .channel, message: "connected to 127.0.0.1:8009")
        #expect(record.line == "1970-01-01T00:00:00.000Z channel debug: connected to 127.0.0.1:8009")
    }

    @Test("control characters from the network are escaped, so a record stays one line")
    func escaping() {
        let record = LogRecord(
            nanosecondsSince1970: 0, level: .info, component: .receiver,
            message: "title\n2nd line\r\t\u{1B}[2J \u{202E}rev \\ end")
        #expect(
            record.line == #"1970-01-01T00:00:00.000Z receiver info: title\n2nd line\r\t\u{1B}[2J \u{202E}rev \ end"#)
    }

    @Test("messages past 16 KiB are cut, with the number of bytes left out")
    func cut() {
        let record = LogRecord(
            nanosecondsSince1970: 0, level: .info, component: .http, message: String(repeating: "a", count: 20_000))
        #expect(record.line.hasSuffix("… (3616 more bytes)"))
        #expect(record.line.utf8.count < 16_500)
    }
}

/// Records collected by a hook.
final class Collected: Sendable {
    let records = Mutex<[LogRecord]>([])
    var all: [LogRecord] { records.withLock { $0 } }
}

/// The logger is one per process: these tests install it in turn and leave it off.
@Suite("the process logger", .serialized)
struct LogTests {
    /// Components of these tests' own, so that other suites logging meanwhile (tests run in
    /// parallel, in one process) never reach these handlers.
    static let components: [LogComponent] = [
        "test-sender", "test-channel", "test-app", "test-discovery", "test-http", "test-threads",
    ]

    @Test("the hook receives what the filter admits, and messages refused are never built")
    func hook() throws {
        let collected = Collected()
        Log.bootstrap(
            filter: try LogFilter(
                parsing: "test-sender=debug,test-channel=warning,test-app=warn", knownComponents: Self.components),
            handler: ClosureLogHandler { record in collected.records.withLock { $0.append(record) } })
        defer { Log.bootstrap(filter: .off, handler: nil) }
        let built = Mutex(0)
        func message(_ text: String) -> String {
            built.withLock { $0 += 1 }
            return text
        }
        Logger("test-sender").debug(message("LOAD (requestId 1)"))
        Logger("test-sender").trace(message("bytes"))
        Logger("test-channel").info(message("connected"))
        Logger("test-channel").error(message("TLS failed"))
        Logger("test-app").warning(message("embedded program's own component"))
        Logger("test-http").error(message("not in the filter: off"))
        #expect(
            collected.all.map { "\($0.component) \($0.level) \($0.message)" } == [
                "test-sender debug LOAD (requestId 1)", "test-channel error TLS failed",
                "test-app warning embedded program's own component",
            ])
        #expect(built.withLock { $0 } == 3)
        #expect(Log.isEnabled(.debug, for: "test-sender") && !Log.isEnabled(.info, for: "test-channel"))
    }

    @Test("without a handler nothing is logged or built")
    func off() {
        Log.bootstrap(filter: LogFilter(threshold: .from(.trace)), handler: nil)
        let built = Mutex(false)
        Logger(.channel).error(
            {
                built.withLock { $0 = true }
                return "x"
            }())
        #expect(!built.withLock { $0 })
        #expect(!Log.isEnabled(.error, for: .channel))
    }

    @Test("a log file gets one line per record, appended after what it held")
    func file() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-log-\(UUID().uuidString).log"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("earlier line\n".utf8).write(to: URL(fileURLWithPath: path))
        let handler = try LineLogHandler(appendingTo: path)
        Log.bootstrap(
            filter: try LogFilter(parsing: "test-discovery=info,test-http=info", knownComponents: Self.components),
            handler: handler)
        Logger("test-discovery").info("found Kitchen Speaker")
        Logger("test-http").debug("not admitted")
        Logger("test-http").warning("multi\nline")
        Log.bootstrap(filter: .off, handler: nil)  // flushes the handler it replaces
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0] == "earlier line")
        #expect(
            lines[1].wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z test-discovery info: found Kitchen Speaker/)
                != nil)
        #expect(lines[2].hasSuffix(#" test-http warning: multi\nline"#))
    }

    @Test("a log file that cannot be opened is log.file-unwritable with a fix")
    func unwritable() {
        #expect {
            try LineLogHandler(appendingTo: "/nonexistent-folder-\(UUID().uuidString)/castprep.log")
        } throws: { error in
            (error as? LogConfigurationError)?.code == .fileUnwritable
                && (error as? LogConfigurationError)?.fix.contains("--log-file") == true
        }
    }

    @Test("records from many threads arrive whole")
    func concurrent() async throws {
        let lines = Mutex<[String]>([])
        let handler = LineLogHandler { batch in lines.withLock { $0 += batch.split(separator: "\n").map(String.init) } }
        Log.bootstrap(
            filter: try LogFilter(parsing: "test-threads=debug", knownComponents: Self.components), handler: handler)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask { for index in 0..<250 { Logger("test-threads").debug("task \(task) record \(index)") } }
            }
        }
        Log.bootstrap(filter: .off, handler: nil)
        let all = lines.withLock { $0 }
        #expect(all.count == 2000)
        #expect(all.allSatisfy { $0.contains(" test-threads debug: task ") })
        #expect(Set(all.map { $0.split(separator: " ").dropFirst().joined(separator: " ") }).count == 2000)
    }
}
