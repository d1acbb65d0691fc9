import CastPrepCommands
import CommandParsing
import JSONSupport
import Testing
import TestSupport

/// `castprep devices` in-process. Discovery itself runs only inside a network namespace
/// (Tests/CastDevicesTests/DevicesNamespaceTests.swift); here only loopback `--host` is used.
@Suite("castprep devices")
struct DevicesCommandTests {
    @Test("help matches its snapshot")
    func help() async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: ["devices", "--help"], io: io) == 0)
        Snapshot.assertMatches(io.capturedOutput, named: "help-devices.txt")
    }

    @Test(
        "usage errors exit 64 and name the problem",
        arguments: [
            (["devices", "--timeout", "0"], "--timeout"),
            (["devices", "--timeout", "soon"], "--timeout"),
            (["devices", "--host", "192.0.2.1:99999"], "port must be a number from 1 to 65535"),
            (["devices", "--host", "http://192.0.2.1/"], "not a URL"),
            (["devices", "--host", "192.0.2.1", "--interface", "eth0"], "--host skips browsing"),
            (["devices", "--color", "sometimes"], "--color"),
        ])
    func usageErrors(arguments: [String], phrase: String) async {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        #expect(await CastPrepCLI.run(arguments: arguments, io: io) == 64)
        #expect(io.capturedError.contains(phrase), "\(io.capturedError)")
        #expect(io.capturedError.contains("Usage: castprep devices"))
        #expect(io.capturedOutput.isEmpty)
    }

    @Test("a host that answers nothing exits 1 with both reasons; --json still prints one document")
    func silentHost() async throws {
        let io = CommandIO.capturing(environment: ["COLUMNS": "100"])
        // 127.0.0.9 is loopback where nothing listens: neither port 1 nor eureka_info on 8008.
        #expect(
            await CastPrepCLI.run(arguments: ["devices", "--host", "127.0.0.9:1", "--timeout", "1", "--json"], io: io)
                == 1)
        let document = try JSONParser().parse(io.capturedOutput).value
        #expect(document["devices"] == [])
        #expect(document["discovery"]?["method"] == "host")
        #expect(document["discovery"]?["hosts"]?[0]?["answered"] == false)
        #expect(document["diagnostics"]?[0]?["code"] == "devices.host-unreachable")
        #expect(
            io.capturedError.contains("[devices.host-unreachable]")
                && io.capturedError.contains("CASTV2 on 127.0.0.9:1 failed"))
        #expect(io.capturedError.hasSuffix("castprep: 0 of 1 host answered\n"))
    }
}
