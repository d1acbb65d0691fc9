public import Foundation
import Glibc
import Synchronization
public import Testing

/// Something a test needs from the machine (a tool, a Python module, root for a network
/// namespace, the built binary), checked in one place.
///
/// A suite says what it needs with ``Testing/Trait/requires(_:sourceLocation:)``. When something is
/// missing, the test is skipped outside CI, with one line on standard error naming what is
/// missing and how to install it; in CI (`CI` set, as every CI service does) the test fails
/// instead, so a machine without nginx cannot pass by skipping the nginx suites.
///
/// ```swift
/// @Suite("nginx diagnosis", .requires(.nginx, .python3Module("jsonschema")))
/// ```
public struct Requirement: Sendable, CustomStringConvertible {
    /// What is needed, e.g. `nginx` or `the Python module jsonschema`.
    public let name: String
    /// How to get it, e.g. `apt-get install nginx (Scripts/bootstrap installs it)`.
    public let remedy: String
    private let probe: @Sendable () -> Bool

    /// A requirement met when `probe` returns true; the probe runs once per process, off
    /// Swift's cooperative pool.
    public init(_ name: String, remedy: String, probe: @escaping @Sendable () -> Bool) {
        self.name = name
        self.remedy = remedy
        self.probe = probe
    }

    public var description: String { name }

    // MARK: - The requirements of the suites

    /// An executable on `PATH` (or in an sbin folder, where nginx and ip live).
    public static func executable(_ name: String, package: String) -> Requirement {
        Requirement(name, remedy: "apt-get install \(package) (Scripts/bootstrap installs it)") {
            executablePath(name) != nil
        }
    }

    /// A module python3 can import.
    public static func python3Module(_ module: String, package: String) -> Requirement {
        Requirement("the Python module \(module)", remedy: "pip install \(package) (Scripts/bootstrap installs it)") {
            guard let python = executablePath("python3") else { return false }
            return (try? run(python, ["-c", "import \(module)"])) == 0
        }
    }

    public static let nginx = executable("nginx", package: "nginx-light")
    /// nginx with the echo module, for answers that stall on purpose.
    public static let nginxEcho = Requirement(
        "nginx's echo module", remedy: "apt-get install libnginx-mod-http-echo (Scripts/bootstrap installs it)"
    ) { NginxServer.echoModule != nil }
    /// nginx's MIME type table, which the generated fix configurations include.
    public static let nginxMIMETypes = Requirement(
        "/etc/nginx/mime.types", remedy: "apt-get install nginx-light (Scripts/bootstrap installs it)"
    ) {
        FileManager.default.fileExists(atPath: "/etc/nginx/mime.types")
    }
    public static let python3 = executable("python3", package: "python3")
    public static let openssl = executable("openssl", package: "openssl")
    public static let curl = executable("curl", package: "curl")
    public static let ffmpeg = executable("ffmpeg", package: "ffmpeg")
    public static let ffprobe = executable("ffprobe", package: "ffmpeg")
    public static let chromium = executable("chromium", package: "chromium")
    public static let zsh = executable("zsh", package: "zsh")
    public static let fish = executable("fish", package: "fish")
    public static let plistutil = executable("plistutil", package: "libplist-utils")
    public static let catt = Requirement("catt", remedy: "pip install catt (Scripts/bootstrap installs it)") {
        executablePath("catt") != nil
    }

    /// Root, `unshare` and `ip`: what a private network (or mount) namespace takes.
    public static let privateNamespace = Requirement(
        "root with unshare and ip (a private network namespace)",
        remedy: "run the tests as root (CI containers are) with util-linux and iproute2 installed"
    ) { getuid() == 0 && executablePath("unshare") != nil && executablePath("ip") != nil }

    /// pychromecast, whose generated protobuf and sender the interop tests compare against.
    public static let pychromecast = python3Module("pychromecast.generated.cast_channel_pb2", package: "pychromecast")

    /// Root and `unshare -m`: a private mount namespace, where a test hides shared libraries.
    public static let privateMounts = Requirement(
        "root with unshare -m (a private mount namespace)",
        remedy: "run the tests as root (CI containers are) with util-linux installed"
    ) {
        guard geteuid() == 0, let unshare = executablePath("unshare") else { return false }
        return (try? run(unshare, ["-m", "true"])) == 0
    }

    /// The built `castprep` binary (`CASTPREP_BINARY`, else the debug build).
    public static let castprepBinary = Requirement(
        "the castprep binary", remedy: "swift build (Scripts/test builds it first)"
    ) {
        CastPrepBinary.exists
    }

    // MARK: - Checking

    /// Whether missing requirements fail tests instead of skipping them: `CI` is set to
    /// anything but `false` or `0`.
    public static func failsWhenMissing(environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["CI"], !value.isEmpty else { return false }
        return !["false", "0"].contains(value.lowercased())
    }

    /// Whether the requirement is met on this machine (probed once per process).
    public func isMet() async -> Bool {
        if let known = Self.results.withLock({ $0[name] }) { return known }
        let probe = self.probe
        let met = await withCheckedContinuation { continuation in
            // Probes start processes and wait for them: never on the cooperative pool.
            Thread.detachNewThread { continuation.resume(returning: probe()) }
        }
        Self.results.withLock { $0[name] = met }
        return met
    }

    /// Checks this requirement inside a test: true when met; false (printed once) when missing
    /// outside CI, for a test that then returns early.
    ///
    /// - Throws: ``Missing`` in CI, which fails the test.
    public func available() async throws(Missing) -> Bool { try await Self.check([self]) }

    /// Checks `requirements`: true when all are met; false (after printing one line per
    /// missing requirement, once per process) when one is missing outside CI.
    ///
    /// - Throws: ``Missing`` when one is missing in CI, which fails the test.
    public static func check(
        _ requirements: [Requirement], environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws(Missing) -> Bool {
        var missing: [Requirement] = []
        for requirement in requirements where await !requirement.isMet() { missing.append(requirement) }
        guard !missing.isEmpty else { return true }
        if failsWhenMissing(environment: environment) { throw Missing(requirements: missing) }
        for requirement in missing where Self.reported.withLock({ $0.insert(requirement.name).inserted }) {
            FileHandle.standardError.write(
                Data(
                    "skipped: the tests that need \(requirement.name), which is missing (\(requirement.remedy)); with CI set they fail\n"
                        .utf8))
        }
        return false
    }

    /// What a test needs and this machine lacks, thrown in CI.
    public struct Missing: Error, CustomStringConvertible {
        public var requirements: [Requirement]
        public var description: String {
            requirements.map { "\($0.name) is missing (\($0.remedy))" }.joined(separator: "; ")
                + "; CI is set, so a missing tool fails instead of skipping"
        }
    }

    private static let results = Mutex<[String: Bool]>([:])
    private static let reported = Mutex<Set<String>>([])

    /// The first executable called `name` on `PATH` or in the sbin folders.
    static func executablePath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        let folders = path.split(separator: ":").map(String.init) + ["/usr/sbin", "/sbin", "/usr/local/sbin"]
        return folders.map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Runs `executable` with `arguments`, output discarded, and returns its exit status.
    private static func run(_ executable: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when every requirement is met; outside CI a missing one skips it
    /// (printed once), in CI it fails it (see ``Requirement``).
    public static func requires(_ requirements: Requirement..., sourceLocation: SourceLocation = #_sourceLocation)
        -> Self
    {
        .enabled("needs \(requirements.map(\.name).joined(separator: ", "))", sourceLocation: sourceLocation) {
            try await Requirement.check(requirements)
        }
    }
}
