public import Foundation
import Glibc
import Synchronization

/// A real nginx on 127.0.0.1, started by a test with its own configuration in a temporary
/// directory, one `server` block per named site, each on a free port. Stopped when released.
///
/// ```swift
/// let nginx = try await NginxServer(sites: ["plain": "", "cors": #"add_header Access-Control-Allow-Origin "*" always;"#],
///                             root: fixtures)
/// let url = nginx.url("cors", "/hls/master.m3u8")
/// ```
///
/// A site body may name another site's port as `{port:NAME}` (for proxying). The master
/// process runs in the foreground (`daemon off`) so the test owns it; as root, workers run as
/// root too so they can read the test's temporary files.
public final class NginxServer: Sendable {
    /// The nginx binary, if installed.
    public static let binary: String? = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The echo module's path, when installed (Debian: libnginx-mod-http-echo).
    public static let echoModule: String? = ["/usr/lib/nginx/modules/ngx_http_echo_module.so"]
        .first { FileManager.default.fileExists(atPath: $0) }

    /// The port of each site, and of each extra listener named in a site body.
    public let ports: [String: Int]
    /// The temporary directory holding the configuration, logs and pid file.
    public let directory: URL
    private let process: Process

    /// Writes the configuration and starts nginx; returns once every site accepts connections.
    ///
    /// - Parameters:
    ///   - sites: site name → directives inside its `server { }` block (after `listen` and `root`).
    ///   - root: the directory every site serves.
    ///   - httpDirectives: extra directives for the `http { }` block.
    public init(sites: [String: String], root: URL, httpDirectives: String = "") async throws {
        guard let binary = Self.binary else {
            throw NginxError("nginx is not installed (Scripts/bootstrap installs nginx-light)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-nginx-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var ports: [String: Int] = [:]
        for name in sites.keys.sorted() { ports[name] = try Self.freePort() }
        // `{port:NAME}` for a NAME that is not a site reserves an extra port (a second listener).
        for body in sites.values {
            var rest = Substring(body)
            while let start = rest.range(of: "{port:"), let end = rest[start.upperBound...].firstIndex(of: "}") {
                let name = String(rest[start.upperBound..<end])
                if ports[name] == nil { ports[name] = try Self.freePort() }
                rest = rest[rest.index(after: end)...]
            }
        }
        self.ports = ports
        let path = directory.path
        var servers = ""
        for (name, body) in sites.sorted(by: { $0.key < $1.key }) {
            var text = body
            for (other, port) in ports { text = text.replacingOccurrences(of: "{port:\(other)}", with: String(port)) }
            servers += """
                server {
                    listen 127.0.0.1:\(ports[name] ?? 0);
                    root \(root.path);
                \(text)
                }

                """
        }
        let isRoot = geteuid() == 0
        let configuration = """
            \(Self.echoModule.map { "load_module \($0);" } ?? "")
            daemon off;
            \(isRoot ? "user root;" : "")
            worker_processes 1;
            pid \(path)/nginx.pid;
            error_log \(path)/error.log warn;
            events { worker_connections 512; }
            http {
                include /etc/nginx/mime.types;
                types { application/dash+xml mpd; text/vtt vtt; video/iso.segment m4s; }
                default_type application/octet-stream;
                access_log off;
                client_body_temp_path \(path)/body;
                proxy_temp_path \(path)/proxy;
                fastcgi_temp_path \(path)/fastcgi;
                uwsgi_temp_path \(path)/uwsgi;
                scgi_temp_path \(path)/scgi;
                keepalive_requests 100000;
            \(httpDirectives)
            \(servers)
            }
            """
        try configuration.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        // The stock type table beside nginx.conf, where a site's `include mime.types;` finds it.
        if FileManager.default.fileExists(atPath: "/etc/nginx/mime.types") {
            try FileManager.default.copyItem(
                atPath: "/etc/nginx/mime.types", toPath: directory.appendingPathComponent("mime.types").path)
        }
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["-p", path, "-c", "\(path)/nginx.conf", "-e", "\(path)/error.log"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle(forWritingAtPath: "/dev/null")
        try process.run()
        for port in ports.values {
            guard await Self.waitForListener(port: port, timeout: 30) else {
                process.terminate()
                await ChildProcess.finish(process)
                let log =
                    (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                throw NginxError("nginx did not start listening on 127.0.0.1:\(port): \(log)")
            }
        }
    }

    deinit { stop() }

    /// Stops nginx (fast shutdown: the master unblocks SIGTERM itself and takes its worker
    /// down with it) and removes its directory once it has exited, on a thread of its own.
    public func stop() {
        let (process, directory) = (process, directory)
        if process.isRunning { process.terminate() }
        Thread {
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }.start()
    }

    /// `http://127.0.0.1:PORT` + `path` for a site.
    public func url(_ site: String, _ path: String) -> String {
        "http://127.0.0.1:\(ports[site] ?? 0)\(path)"
    }

    /// A port on 127.0.0.1 that nothing listens on, for a server the test is about to start.
    ///
    /// Ports come from below the kernel's ephemeral range (`ip_local_port_range`): a port the
    /// kernel hands out for bind(0) can be handed out again at once as the local port of any
    /// outgoing connection, and under parallel tests one did, so a server started on it found
    /// its address in use. Each port is handed out once per test process and is checked free by
    /// binding it.
    public static func freePort() throws -> Int {
        let (low, high) = portsBelowEphemeralRange
        for _ in 0..<256 {
            let candidate = Int.random(in: low...high)
            let claimed = handedOut.withLock { $0.insert(candidate).inserted }
            guard claimed, isFree(port: candidate) else { continue }
            return candidate
        }
        throw NginxError("no free port on 127.0.0.1 in \(low)...\(high) after 256 tries")
    }

    private static let handedOut = Mutex<Set<Int>>([])

    /// The ports below the ephemeral range, which only an explicit bind takes.
    private static let portsBelowEphemeralRange: (Int, Int) = {
        let text = (try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_local_port_range", encoding: .utf8)) ?? ""
        let lowestEphemeral = text.split(whereSeparator: \.isWhitespace).first.flatMap { Int($0) } ?? 32768
        let high = max(lowestEphemeral - 1, 11_024)
        return (max(10_000, high - 16_000), high)
    }()

    private static func isFree(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return bound == 0
    }

    /// Whether something accepts connections on 127.0.0.1:`port` within `timeout` seconds;
    /// the connection attempts and the pauses between them run on a thread of their own.
    static func waitForListener(port: Int, timeout: Double) async -> Bool {
        await offPool { connects(port: port, within: timeout) }
    }

    private static func connects(port: Int, within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            close(descriptor)
            if connected == 0 { return true }
            usleep(20_000)
        }
        return false
    }
}

/// Why nginx could not be started.
public struct NginxError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// Media fixtures for HTTP tests: the HLS (TS), DASH and MP4 samples plus a byte-range playlist
/// and a caption track, copied into a temporary directory that nginx serves.
public enum HTTPFixtures {
    /// Creates the fixture tree and returns its root.
    public static func make() throws -> URL {
        let samples = Repository.root().appendingPathComponent("Samples")
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-http-fixtures-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let manager = FileManager.default
        try manager.createDirectory(at: root, withIntermediateDirectories: true)
        for folder in ["hls-ts", "hls-fmp4", "dash"] {
            try manager.copyItem(at: samples.appendingPathComponent(folder), to: root.appendingPathComponent(folder))
        }
        try manager.copyItem(
            at: samples.appendingPathComponent("h264-aac-faststart.mp4"), to: root.appendingPathComponent("movie.mp4"))
        let byteRange = root.appendingPathComponent("hls-byterange")
        try manager.createDirectory(at: byteRange, withIntermediateDirectories: true)
        let segment = try Data(contentsOf: samples.appendingPathComponent("hls-ts/v0/seg0.ts"))
        try segment.write(to: byteRange.appendingPathComponent("all.ts"))
        let first = segment.count / 188 / 2 * 188
        let playlist = """
            #EXTM3U
            #EXT-X-VERSION:4
            #EXT-X-TARGETDURATION:1
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXTINF:0.5,
            #EXT-X-BYTERANGE:\(first)@0
            all.ts
            #EXTINF:0.5,
            #EXT-X-BYTERANGE:\(segment.count - first)
            all.ts
            #EXT-X-ENDLIST

            """
        try playlist.write(to: byteRange.appendingPathComponent("index.m3u8"), atomically: true, encoding: .utf8)
        // Directories and files must be readable by nginx's workers.
        _ = chmod(root.path, 0o755)
        return root
    }
}
