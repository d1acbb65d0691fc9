import Foundation
@testable import HTTPCheck
import SystemIO
import TestSupport
import Testing

/// Set in the child test process that runs inside the private namespace.
private let namespaceVariable = "CASTPREP_HEAD_PIPELINE_NETNS"
private let insideNamespace = ProcessInfo.processInfo.environment[namespaceVariable] != nil

/// Names for the pipeline to resolve, which must never reach a real resolver: the test runs
/// itself again under `unshare --net --mount` (nothing but a loopback interface, so no query
/// leaves the machine) with a hosts file of its own bind-mounted over `/etc/hosts`, where
/// `two.castprep.test` has `::1` and `127.0.0.1`. Needs root (or CAP_SYS_ADMIN), as CI has.
@Suite("Pipelined HEADs to a host name, in a private network namespace", .enabled(if: !insideNamespace))
struct HeadPipelineNamespaceTests {
    @Test("a name is resolved off the loop and every address is tried", .timeLimit(.minutes(1)))
    func inNamespace() async throws {
        let binary = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let hosts = FileManager.default.temporaryDirectory.appendingPathComponent("castprep-hosts-\(UUID().uuidString)")
            .path
        try "::1 two.castprep.test\n127.0.0.1 two.castprep.test\n127.0.0.1 localhost\n".write(
            toFile: hosts, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: hosts) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        let setup = "set -e; ip link set lo up; mount --bind \"$1\" /etc/hosts"
        process.arguments = [
            "--net", "--mount", "--", "/bin/sh", "-c",
            setup + "; exec \"$0\" --testing-library swift-testing --filter InsideHeadPipelineNamespace", binary, hosts,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment[namespaceVariable] = "1"
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let processResult = try await ChildProcess.run(process)
        let data = processResult.outputData
        let text = String(decoding: data, as: UTF8.self)
        let passed = text.range(of: #"Test run with 1 test.* passed"#, options: .regularExpression) != nil
        #expect(process.terminationStatus == 0 && passed, "failed in its namespace:\n\(text)")
    }
}

/// Runs only in the child process, inside the namespace.
@Suite(.enabled(if: insideNamespace))
struct InsideHeadPipelineNamespace {
    @Test func nameWithTwoAddresses() async throws {
        // Refuse to resolve anything unless this process sees only the namespace's loopback.
        let names = try NetworkInterface.list().map(\.name)
        try #require(names == ["lo"], "not inside a private network namespace: \(names)")
        let addresses = try await AddressResolver.resolve(host: "two.castprep.test", port: 80)
        try #require(addresses.map(\.host) == ["::1", "127.0.0.1"], "the hosts file was not used: \(addresses)")

        // The server listens on 127.0.0.1 only: the first address, ::1, refuses.
        let server = try ScriptedServer(.pipelines)
        let pipeline = HeadPipeline(connectionsPerHost: 2, depth: 4)
        let paths = (0..<20).map { "/n/\($0)" }
        let answers = await pipeline.send(
            paths.map { "http://two.castprep.test:\(server.port)\($0)" },
            headers: HeadPipelineTests.origin, timeout: .seconds(10))
        HeadPipelineTests.expectMatched(answers, paths: paths)

        // A name nobody knows fails as a name failure, and the pipeline still serves the next.
        let unknown = await pipeline.send(
            ["http://nobody.castprep.test:\(server.port)/x"], headers: [], timeout: .seconds(10))
        guard case .failure(let failure) = unknown.first else {
            Issue.record("an unknown name was answered: \(unknown)")
            return
        }
        #expect(failure.kind == .dns)
        let again = await pipeline.send(
            [server.url("/after")], headers: HeadPipelineTests.origin, timeout: .seconds(10))
        HeadPipelineTests.expectMatched(again, paths: ["/after"])
    }
}
