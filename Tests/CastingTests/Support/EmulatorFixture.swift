import CastChannel
import CastDiscovery
import CastModel
import CastReceiver
import CastReceiverRuntime
import Foundation
import JSONSupport
import MediaServer
import Synchronization
import Testing
import TestSupport

/// An emulated device on 127.0.0.1 for one test, with a recorder of every frame senders send
/// and of the emulator's log.
final class EmulatedDevice: Sendable {
    let emulator: ReceiverEmulator
    let endpoints: ReceiverEmulator.Endpoints
    private let frames = Mutex<[[UInt8]]>([])
    private let entries = Mutex<[ReceiverLogEntry]>([])

    private init(emulator: ReceiverEmulator, endpoints: ReceiverEmulator.Endpoints) {
        self.emulator = emulator
        self.endpoints = endpoints
    }

    static func start(faults: ReceiverFaults = ReceiverFaults(), castPort: Int = 0) async throws -> EmulatedDevice {
        let holder = Mutex<EmulatedDevice?>(nil)
        var server = ReceiverEmulator.deviceServerOptions
        server.inboundFrameRecorder = { frame in holder.withLock { $0?.frames.withLock { $0.append(frame) } } }
        var configuration = ReceiverEmulator.Configuration(
            identity: DeviceIdentity(
                id: CastDeviceID("0c1d2e3f4a5b46778899aabbccddeeff")!, friendlyName: "Test Lounge"),
            bindAddress: "127.0.0.1",
            castPort: castPort, httpPort: 0,
            receiver: ReceiverConfiguration(bufferingTime: .milliseconds(100), seed: 11), faults: faults,
            fetch: .init(loopbackIsReachable: true, requestTimeout: .seconds(3), totalTimeout: .seconds(30)),
            server: server)
        configuration.log = { entry in holder.withLock { $0?.entries.withLock { $0.append(entry) } } }
        let emulator = ReceiverEmulator(configuration: configuration)
        let endpoints = try await emulator.start()
        let device = EmulatedDevice(emulator: emulator, endpoints: endpoints)
        holder.withLock { $0 = device }
        return device
    }

    /// `127.0.0.1:PORT`, for `--host`.
    var hostArgument: String { "127.0.0.1:\(endpoints.castPort)" }

    /// Every frame received so far, bytes as sent.
    var recordedFrames: [[UInt8]] { frames.withLock { $0 } }

    /// The emulator's log so far.
    var log: [ReceiverLogEntry] { entries.withLock { $0 } }

    /// Media requests of `type` the device received.
    func received(_ type: String) -> [JSONValue] {
        log.filter { $0.direction == .incoming && $0.payload?["type"]?.stringValue == type }.compactMap(\.payload)
    }

    /// The device's current state.
    var device: ReceiverDevice { get async { await emulator.host.snapshot } }

    /// Polls the device until `condition` holds, or fails after `timeout`.
    func waitUntil(_ what: String, timeout: Duration = .seconds(20), _ condition: (ReceiverDevice) -> Bool) async throws
    {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if condition(await device) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        let status =
            await device.mediaStatus.map { JSONWriter.compact.string(from: $0.jsonValue) } ?? "no media session"
        Issue.record("timed out waiting until \(what); media status: \(status)")
        throw CancellationError()
    }

    func stop() async { await emulator.stop() }
}

/// The built `castprep` binary as a user runs it, in the background or to its end.
extension CastPrepBinary {
    /// Runs to completion (killed after `timeout`) and returns status, stdout and stderr.
    static func run(_ arguments: [String], timeout: Duration = .seconds(60)) async throws -> (
        status: Int32, output: String, error: String
    ) {
        let running = try start(arguments)
        return try await running.finish(timeout: timeout)
    }

    /// Starts the binary in the background.
    static func start(_ arguments: [String]) throws -> RunningCommand {
        let (process, output, error) = Self.process(arguments)
        let command = RunningCommand(process: process, output: output, error: error)
        try process.run()
        command.startReading()
        return command
    }
}

/// A `castprep` process running in the background; its output is collected as it comes, so
/// a full pipe never blocks it.
final class RunningCommand: Sendable {
    let process: Process
    private let output: Pipe
    private let error: Pipe
    private let collected = Mutex<(out: [UInt8], err: [UInt8])>(([], []))
    private let finishedReading = DispatchGroup()

    init(process: Process, output: Pipe, error: Pipe) {
        self.process = process
        self.output = output
        self.error = error
    }

    /// Kills the process if a failed test left it running (Foundation reaps it).
    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    func startReading() {
        for (handle, isError) in [(output.fileHandleForReading, false), (error.fileHandleForReading, true)] {
            finishedReading.enter()
            let group = finishedReading
            Thread { [self] in
                while true {
                    let data = handle.availableData
                    if data.isEmpty { break }
                    self.collected.withLock { if isError { $0.err += data } else { $0.out += data } }
                }
                group.leave()
            }.start()
        }
    }

    var outputSoFar: String { String(decoding: collected.withLock { $0.out }, as: UTF8.self) }
    var errorSoFar: String { String(decoding: collected.withLock { $0.err }, as: UTF8.self) }

    /// Sends SIGINT, as Ctrl-C does.
    func interrupt() { if process.isRunning { kill(process.processIdentifier, SIGINT) } }

    /// Waits for the process to exit (SIGKILL after `timeout`) and returns what it printed.
    func finish(timeout: Duration = .seconds(60)) async throws -> (status: Int32, output: String, error: String) {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline {
                kill(process.processIdentifier, SIGKILL)
                Issue.record("castprep \(process.arguments ?? []) did not finish within \(timeout)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let group = finishedReading
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            group.notify(queue: .global()) { continuation.resume() }
        }
        return (process.terminationStatus, outputSoFar, errorSoFar)
    }
}

/// Media made for the casting tests: a long clip, so that playback does not end mid-test.
enum CastingSamples {
    /// A folder with `movie.mp4` (60 s, tiny), `movie.en.srt`, `movie.de.ttml`, `song.mp3` and a style file.
    static func folder() async throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-cast-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let samples = Repository.root().appendingPathComponent("Samples")
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
        ffmpeg.arguments = [
            "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=black:s=64x36:r=2", "-f", "lavfi", "-i",
            "anullsrc=r=8000:cl=mono",
            "-t", "60", "-c:v", "libx264", "-preset", "ultrafast", "-g", "20", "-c:a", "aac", "-b:a", "16k",
            "-movflags", "+faststart",
            folder.appendingPathComponent("movie.mp4").path,
        ]
        try await ChildProcess.run(ffmpeg)
        guard ffmpeg.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("subs.en.srt"), to: folder.appendingPathComponent("movie.en.srt"))
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("subs.de.ttml"), to: folder.appendingPathComponent("movie.de.ttml"))
        try FileManager.default.copyItem(
            at: folder.appendingPathComponent("movie.mp4"), to: folder.appendingPathComponent("trailer.mp4"))
        try FileManager.default.copyItem(
            at: samples.appendingPathComponent("tone.mp3"), to: folder.appendingPathComponent("song.mp3"))
        try Data(
            ##"{"foregroundColor":"#FFFF00FF","backgroundColor":"#00000099","edgeType":"OUTLINE","fontScale":1.25}"##
                .utf8
        )
        .write(to: folder.appendingPathComponent("style.json"))
        return folder
    }
}

/// The repository's Samples folder served on 127.0.0.1 (port chosen by the system), as a media
/// server a device would fetch from. Stop it when done.
enum SampleServer {
    /// Serves `folder` (the repository's Samples by default) on a free loopback port.
    static func start(serving folder: URL = Repository.root().appendingPathComponent("Samples")) throws -> (
        MediaServer, MediaServer.Endpoint
    ) {
        let server = MediaServer(
            configuration: MediaServerConfiguration(
                mounts: [.init(urlPrefix: "/", directory: folder.path)], bindAddress: "127.0.0.1", port: 0))
        return (server, try server.start())
    }
}
