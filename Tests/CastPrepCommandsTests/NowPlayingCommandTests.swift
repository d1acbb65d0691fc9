import CastPrepCommands
import CommandParsing
import Foundation
import Testing
import TestSupport

@Suite("castprep nowplaying")
struct NowPlayingCommandTests {
    @Test("help matches its snapshot")
    func help() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: ["nowplaying", "--help"], io: io) == 0)
        Snapshot.assertMatches(io.capturedOutput, named: "help-nowplaying.txt")
    }

    @Test(
        "usage errors exit 64 before any bus or network is touched",
        arguments: [
            (["nowplaying", "--host", "127.0.0.1", "--device", "tv"], "give --device or --host, not both"),
            (["nowplaying", "--host", "not an address:99999"], "Usage: castprep nowplaying"),
            (
                ["nowplaying", "--log-level", "chanel=debug"],
                "log.unknown-component: --log-level names an unknown component 'chanel'; did you mean 'channel'?"
            ),
            (["nowplaying", "--log-level", "loud"], "log.unknown-level"),
        ])
    func usageErrors(arguments: [String], message: String) async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: arguments, io: io) == 64)
        #expect(io.capturedError.contains(message))
    }

    @Test("a bad CASTPREP_LOG is a usage error naming the variable, with the fix")
    func badEnvironment() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100", "CASTPREP_LOG": "channel=debug,htp=warn"])
        #expect(await CastPrepCLI.run(arguments: ["status", "--host", "127.0.0.1"], io: io) == 64)
        #expect(
            io.capturedError.contains(
                "Error: log.unknown-component: CASTPREP_LOG names an unknown component 'htp'; did you mean 'http'?"))
        #expect(
            io.capturedError.contains(
                "Help:  use one of: channel, discovery, http, sender, receiver, nowplaying (e.g. http=warn)"))
    }

    @Test("without a session bus it fails with its code and the fix", .requires(.castprepBinary))
    func noSessionBus() async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent/castprep-test-bus"
        environment["NO_COLOR"] = "1"
        // The device (nothing listens on port 1) is never asked: the bus is checked first, and fails.
        let fixed = environment
        let result = try await runProcess(
            CastPrepBinary.path, ["nowplaying", "--host", "127.0.0.1:1"], environment: fixed)
        #expect(result.status == 1)
        #expect(
            result.error.contains("Error: nowplaying.no-session-bus: cannot connect to the D-Bus session bus"),
            "\(result.error)")
        #expect(
            result.error.contains(
                "fix: run castprep nowplaying inside a desktop session, or start a bus for it: dbus-run-session"))
    }
}

/// libsystemd is loaded when `castprep nowplaying` starts, never by the other commands.
@Suite("libsystemd is loaded at run time", .requires(.castprepBinary))
struct SystemdLoadingTests {
    @Test("starting castprep does not load libsystemd")
    func notAtStart() async throws {
        let libraries = try await LibraryLoadingTests.librariesLoadedAtStart()
        #expect(libraries.contains { $0.hasPrefix("libc.so") }, "\(libraries)")
        #expect(!libraries.contains { $0.hasPrefix("libsystemd") }, "\(libraries)")
    }

    @Test("without it, nowplaying says what to install and exits 1", .requires(.privateMounts))
    func withoutLibrary() async throws {
        let script = """
            set -e
            library=$(ldconfig -p | awk '$1 == "libsystemd.so.0" { print $NF; exit }')
            [ -n "$library" ]
            mount --bind /dev/null "$(readlink -f "$library")"
            set +e
            "$CASTPREP" --version; echo "version status $?"
            timeout 30 "$CASTPREP" nowplaying --host 127.0.0.1:1; echo "nowplaying status $?"
            """
        let (status, text) = try await LibraryLoadingTests.runInMountNamespace(script)
        #expect(status == 0, "\(text)")
        #expect(text.contains("version status 0"), "\(text)")
        #expect(
            text.contains("Error: nowplaying.dbus-library-missing: libsystemd (libsystemd.so.0) could not be loaded"),
            "\(text)")
        #expect(text.contains("fix: install libsystemd: apt-get install libsystemd0"), "\(text)")
        #expect(text.contains("nowplaying status 1"), "\(text)")
    }
}

/// `Scripts/interop/nowplaying`: playerctl against the built binary and the emulator, on a
/// private session bus in a private network namespace.
@Suite("castprep nowplaying with playerctl", .serialized)
struct NowPlayingInteropTests {
    @Test(
        "playerctl lists, reads and drives the device; device changes reach playerctl",
        .requires(
            .privateNamespace, .castprepBinary, .ffmpeg, .python3,
            .executable("playerctl", package: "playerctl"), .executable("dbus-run-session", package: "dbus"),
            .executable("timeout", package: "coreutils")),
        .timeLimit(.minutes(3)))
    func playerctl() async throws {
        let script = Repository.root().appendingPathComponent("Scripts/interop/nowplaying").path
        // timeout runs the script in a process group of its own and stops all of it on expiry.
        let result = try await runProcess("/usr/bin/timeout", ["-k", "10", "150", script, CastPrepBinary.path])
        let report = result.output + result.error
        #expect(result.status == 0, "\(report)")
        #expect(!report.contains("FAILED"), "\(report)")
        #expect(report.contains("ok     playerctl -l lists the device"))
    }
}
