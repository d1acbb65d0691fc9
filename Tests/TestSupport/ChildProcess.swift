import Dispatch
public import Foundation
import Glibc
import Synchronization

/// Runs `body` on a thread of its own and resumes the caller with its result: for the blocking
/// calls of a test (a raw socket read, a process wait) that must never hold one of the
/// cooperative pool's threads, of which a two-core machine has two.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// The non-throwing form of ``onOwnThread(_:)``, for this module.
func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}

/// How a child process ended and what it printed.
public struct ProcessResult: Sendable {
    /// The exit status, or the signal number when ``reason`` is `.uncaughtSignal`.
    public var status: Int32
    public var reason: Process.TerminationReason
    /// Standard output, when it went to a `Pipe`; empty otherwise.
    public var outputData: Data
    /// Standard error, when it went to a `Pipe` of its own; empty otherwise.
    public var errorData: Data

    public var output: String { String(decoding: outputData, as: UTF8.self) }
    public var error: String { String(decoding: errorData, as: UTF8.self) }
    /// Status, output and error, for a `let (status, output, error) = …`.
    public var fields: (status: Int32, output: String, error: String) { (status, output, error) }
}

/// Child processes for tests, awaited without holding a thread of Swift's cooperative pool.
///
/// The waiting (pipe reads to the end, the exit) happens on threads of their own, so a test
/// that runs ffmpeg or the built binary leaves both pool threads to the tests beside it. A
/// cancelled task kills its child with SIGKILL (the test process blocks SIGTERM, and children
/// inherit the mask), so no process outlives a failed or cancelled test.
///
/// ```swift
/// let result = try await ChildProcess.run("/usr/bin/ffprobe", ["-v", "error", path])
/// #expect(result.status == 0)
/// ```
public enum ChildProcess {
    /// Runs `executable` with `arguments` to its end, stdout and stderr captured; stdin is
    /// empty unless `stdin` is given. The environment defaults to the test's, with `NO_COLOR`.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: URL? = nil,
        stdin: Data? = nil
    ) async throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment ?? ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1"]) { $1 }
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = Pipe()
        process.standardError = Pipe()
        process.standardInput = FileHandle.nullDevice
        return try await run(process, stdin: stdin)
    }

    /// Starts a configured `process` and awaits its end. Standard output and error set to a
    /// `Pipe` are read to their end (both at once, so a full pipe never stalls the child);
    /// `stdin`, when given, replaces standard input and is written then closed.
    @discardableResult
    public static func run(_ process: Process, stdin: Data? = nil) async throws -> ProcessResult {
        let input = stdin.map { _ in Pipe() }
        if let input { process.standardInput = input }
        try await start(process)
        if let input, let stdin {
            Thread {
                // A child that exits without reading makes the write fail with EPIPE, which
                // the test process ignores; the result says what the child did.
                try? input.fileHandleForWriting.write(contentsOf: stdin)
                try? input.fileHandleForWriting.close()
            }.start()
        }
        return await finish(process)
    }

    /// Starts `process` from a thread of its own that has SIGINT and SIGTERM unblocked, so the
    /// child starts with them unblocked too. The test process blocks them on the threads that ran
    /// a command's signal handling, and a child inherits its spawning thread's mask: a script
    /// whose cleanup sends SIGTERM to its own children and waits would then wait forever.
    public static func start(_ process: Process) async throws {
        try await onOwnThread {
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGINT)
            sigaddset(&signals, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &signals, nil)
            try process.run()
        }
    }

    /// Awaits the end of a started `process`, reading whatever `Pipe`s it writes to.
    @discardableResult
    public static func finish(_ process: Process) async -> ProcessResult {
        let outputPipe = process.standardOutput as? Pipe
        let errorPipe = process.standardError as? Pipe
        let output = outputPipe?.fileHandleForReading
        // One pipe for both streams is read once, as output.
        let errors = errorPipe === outputPipe ? nil : errorPipe?.fileHandleForReading
        let identifier = process.processIdentifier
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let errorData = Mutex(Data())
                let errorsRead = DispatchSemaphore(value: 0)
                // Blocking waits, each on a thread of its own: never on the pool.
                Thread {
                    let data = errors?.readDataToEndOfFile() ?? Data()
                    errorData.withLock { $0 = data }
                    errorsRead.signal()
                }.start()
                Thread {
                    let outputData = output?.readDataToEndOfFile() ?? Data()
                    errorsRead.wait()
                    process.waitUntilExit()
                    continuation.resume(
                        returning: ProcessResult(
                            status: process.terminationStatus, reason: process.terminationReason,
                            outputData: outputData, errorData: errorData.withLock { $0 }))
                }.start()
            }
        } onCancel: {
            Glibc.kill(identifier, SIGKILL)
        }
    }

    /// Reads `pipe` on a thread of its own until `marker` appears, the pipe ends or `timeout`
    /// passes; returns what was read (a server's start lines: its port, say).
    public static func read(_ pipe: Pipe, until marker: String = "\n", timeout: Duration = .seconds(60)) async
        -> String
    {
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        return await offPool {
            var text = ""
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline, !text.contains(marker) {
                let chunk = pipe.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text
        }
    }

    /// Kills `process` with SIGKILL (SIGTERM is blocked in the children of the test process)
    /// and awaits its end.
    @discardableResult
    public static func kill(_ process: Process) async -> ProcessResult {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        return await finish(process)
    }
}
