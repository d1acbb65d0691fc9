import CastPrepCommands
import CommandParsing
import Foundation
import Synchronization
import Testing
import TestSupport

@Suite("castprep serve")
struct ServeCommandTests {
    @Test("help matches its snapshot")
    func help() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        let status = await CastPrepCLI.run(arguments: ["serve", "--help"], io: io)
        #expect(status == 0)
        Snapshot.assertMatches(io.capturedOutput, named: "help-serve_help.txt")
    }

    @Test("a missing directory fails with a diagnostic and exit 1")
    func missingDirectory() async {
        let result = await castprep("serve", "/nonexistent/castprep-media", "--port", "0", "--bind", "127.0.0.1")
        #expect(result.status == 1)
        #expect(result.error.contains("error: [serve.directory-missing] cannot serve '/nonexistent/castprep-media'"))
        #expect(result.output.isEmpty)
    }

    @Test(
        "usage errors exit 64",
        arguments: [
            ["serve", "Samples", "--port", "70000"],
            ["serve", "Samples", "--mount", "captions"],
            ["serve", "Samples", "--timeout", "0"],
            ["serve"],
        ])
    func usageErrors(arguments: [String]) async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: arguments, io: io) == 64)
        #expect(io.capturedError.contains("Usage: castprep serve"))
    }

    @Test("an origin list without the receiver's origin is warned about")
    func originWarning() async {
        let result = await castprep("serve", "/nonexistent/castprep-media", "--origin", "https://example.com")
        #expect(result.error.contains("warning: [serve.origin-list-excludes-receiver]"))
    }

    @Test("an address that is not numeric is refused before listening")
    func badBind() async {
        let result = await castprep("serve", "Samples", "--port", "0", "--bind", "my-laptop.local")
        #expect(result.status == 1)
        #expect(result.error.contains("[serve.address-invalid]"))
    }
}

/// A `castprep serve` process started for a test, with its stdout and stderr collected.
final class ServeProcess: Sendable {
    let process: Process
    private let output = Pipe()
    private let errors = Pipe()

    init(executable: String, arguments: [String], currentDirectory: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = currentDirectory
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        self.process = process
    }

    /// Kills the process if a failed test left it running (Foundation reaps it).
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Blocks until stdout holds a line starting with `Serving`, the process ends, or 15 s pass.
    func waitForStartLine() -> String {
        var text = ""
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline, process.isRunning || !text.isEmpty {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
            if text.contains("\n  address:") || text.contains("\n  also") { break }
        }
        return text
    }

    /// Stderr read so far by ``waitForError(containing:seconds:)``.
    private let errorsRead = Mutex("")

    /// Blocks until stderr holds `text` or `seconds` pass, and returns what it holds.
    func waitForError(containing text: String, seconds: Double) -> String {
        let descriptor = errors.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !errorsRead.withLock({ $0.contains(text) }), Date() < deadline {
            var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 50) > 0 else { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            errorsRead.withLock { $0 += String(decoding: buffer[..<count], as: UTF8.self) }
        }
        return errorsRead.withLock { $0 }
    }

    /// Sends `signal`, waits for the exit, and returns the status with the rest of stdout and
    /// all of stderr.
    func stop(signal number: Int32 = SIGTERM) -> (status: Int32, output: String, error: String) {
        kill(process.processIdentifier, number)
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        let error = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let earlier = errorsRead.withLock { $0 }
        return (
            process.terminationStatus, String(decoding: rest, as: UTF8.self),
            earlier + String(decoding: error, as: UTF8.self)
        )
    }
}

/// Runs curl and returns what `--write-out` printed.
func curl(_ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["curl", "--silent", "--max-time", "10"] + arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self)
}

var castprepBinary: String {
    ProcessInfo.processInfo.environment["CASTPREP_BINARY"]
        ?? Repository.root().appendingPathComponent(".build/debug/castprep").path
}

@Suite("castprep serve as a process", .requires(.castprepBinary, .curl))
struct ServeBinaryTests {
    @Test("serves Samples on 127.0.0.1 with an ephemeral port, logs, and stops cleanly on SIGTERM")
    func servesAndStops() async throws {
        let server = try ServeProcess(
            executable: castprepBinary, arguments: ["serve", "Samples", "--port", "0", "--bind", "127.0.0.1"],
            currentDirectory: Repository.root())
        let started = try await onOwnThread { server.waitForStartLine() }
        let firstLine = try #require(started.split(separator: "\n").first.map(String.init))
        let match = try #require(
            firstLine.firstMatch(
                of: /^Serving Samples at (http:\/\/127\.0\.0\.1:(\d+)\/) \(bound to 127\.0\.0\.1:(\d+)\)$/))
        #expect(match.2 == match.3)
        let base = String(match.1)
        let written = try await onOwnThread {
            try curl([
                "--output", "/dev/null", "--write-out", "%{http_code} %{content_type} %{size_download}",
                "-H", "Origin: https://www.gstatic.com", "-H", "Range: bytes=0-1", base + "hls-ts/master.m3u8",
            ])
        }
        #expect(written == "206 application/vnd.apple.mpegurl 2")
        let traversal = try await onOwnThread {
            try curl([
                "--path-as-is", "--output", "/dev/null", "--write-out", "%{http_code}", base + "../Package.swift",
            ])
        }
        #expect(traversal == "400")
        let result = try await onOwnThread { server.stop() }
        #expect(result.status == 0)
        #expect(
            result.error.contains(
                "127.0.0.1 \"GET /hls-ts/master.m3u8\" 206 2 bytes range=bytes=0-1 origin=https://www.gstatic.com"))
        #expect(result.error.contains("127.0.0.1 \"GET /../Package.swift\" 400 0 bytes"))
        #expect(result.error.hasSuffix("castprep: stopped (SIGTERM)\n"))
    }

    @Test("a request's log line shows while the server runs; a burst's lines are all written, in order, by SIGINT")
    func logIsPromptAndComplete() async throws {
        let server = try ServeProcess(
            executable: castprepBinary, arguments: ["serve", "Samples", "--port", "0", "--bind", "127.0.0.1"],
            currentDirectory: Repository.root())
        let started = try await onOwnThread { server.waitForStartLine() }
        let base = String(try #require(started.firstMatch(of: /http:\/\/127\.0\.0\.1:\d+\//)).0)
        _ = try await onOwnThread { try curl(["--head", "--output", "/dev/null", base + "tone.mp3"]) }
        let first = try await onOwnThread {
            server.waitForError(containing: "\"HEAD /tone.mp3\" 200 0 bytes", seconds: 10)
        }
        #expect(first.contains("127.0.0.1 \"HEAD /tone.mp3\" 200 0 bytes"))
        // One curl, 300 requests on one connection; then stop at once, before any pause ends.
        let targets = (0..<300).map { "\(base)missing-\($0).mp4" }
        _ = try await onOwnThread { try curl(["--head", "--output", "/dev/null"] + targets) }
        let result = try await onOwnThread { server.stop(signal: SIGINT) }
        #expect(result.status == 0)
        let lines = result.error.split(separator: "\n").filter { $0.contains("/missing-") }.map(String.init)
        #expect(lines == (0..<300).map { "127.0.0.1 \"HEAD /missing-\($0).mp4\" 404 0 bytes" })
        #expect(result.error.hasSuffix("castprep: stopped (SIGINT)\n"))
    }

    @Test("SIGINT stops it too")
    func interrupt() async throws {
        let server = try ServeProcess(
            executable: castprepBinary,
            arguments: ["serve", "Samples", "--port", "0", "--bind", "127.0.0.1", "--quiet"],
            currentDirectory: Repository.root())
        _ = try await onOwnThread { server.waitForStartLine() }
        let result = try await onOwnThread { server.stop(signal: SIGINT) }
        #expect(result.status == 0)
        #expect(result.error.hasSuffix("castprep: stopped (SIGINT)\n"))
    }

    /// Builds two networks inside a private network namespace (a veth pair, 10.98.0.1/24 and
    /// 10.97.0.1/24) and asks for the address a device at 10.97.0.7 would reach. No traffic
    /// leaves the namespace.
    @Test(
        "the printed URL uses the interface that routes to --device; the others are listed",
        .requires(.privateNamespace))
    func routeToDevice() async throws {
        let script = """
            set -e
            ip link set lo up
            ip link add cpa type veth peer name cpb
            ip addr add 10.98.0.1/24 dev cpa
            ip addr add 10.97.0.1/24 dev cpb
            ip link set cpa up
            ip link set cpb up
            out=$(mktemp)
            "$CASTPREP" serve Samples --port 0 --device 10.97.0.7 --quiet > "$out" 2>/dev/null &
            pid=$!
            for i in $(seq 100); do grep -q "address:" "$out" && break; sleep 0.1; done
            url=$(sed -n 's/^Serving Samples at \\(http[^ ]*\\) .*/\\1/p' "$out")
            code=$(curl -s -o /dev/null -w '%{http_code}' -r 0-1 "${url}tone.mp3")
            kill -TERM $pid
            wait $pid && echo "exit 0" || echo "exit $?"
            cat "$out"
            echo "fetched $code"
            rm -f "$out"
            """
        let output = try await onOwnThread { () -> String in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
            process.arguments = ["-n", "sh", "-c", script]
            process.currentDirectoryURL = Repository.root()
            var environment = ProcessInfo.processInfo.environment
            environment["CASTPREP"] = castprepBinary
            process.environment = environment
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = pipe
            try process.run()
            let data = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        let port = try #require(output.firstMatch(of: /bound to 0\.0\.0\.0:(\d+)/)?.1)
        #expect(output.contains("Serving Samples at http://10.97.0.1:\(port)/ (bound to 0.0.0.0:\(port))"), "\(output)")
        #expect(output.contains("  address: the address this machine uses to reach 10.97.0.7 (through cpb)"))
        #expect(output.contains("  also: http://10.98.0.1:\(port)/ (cpa)"))
        #expect(output.contains("fetched 206"))
        #expect(output.hasPrefix("exit 0"))
    }
}
