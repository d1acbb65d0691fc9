public import Foundation
import Glibc

/// Apache httpd or Caddy on 127.0.0.1, started by a test with its own configuration in a
/// temporary directory and serving one folder on a free port; stopped (and the directory
/// removed) by ``stop()`` or when released, so a failing test stops it too.
///
/// ```swift
/// let apache = try await WebServer(.apache, site: "AddType text/vtt .vtt", root: folder)
/// let url = apache.url("/en.vtt")
/// ```
public final class WebServer: Sendable {
    /// The servers this helper starts.
    public enum Kind: String, Sendable, CaseIterable {
        case apache, caddy

        /// The binary, if installed (Debian: apache2, caddy).
        public var binary: String? {
            let candidates =
                switch self {
                case .apache: ["/usr/sbin/apache2", "/usr/sbin/httpd"]
                case .caddy: ["/usr/bin/caddy", "/usr/local/bin/caddy"]
                }
            return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
        }

        public var isAvailable: Bool { binary != nil }
    }

    public let port: Int
    public let directory: URL
    private let process: Process

    /// Writes the configuration and starts the server; returns once it accepts connections.
    ///
    /// - Parameters:
    ///   - site: directives inside the `<VirtualHost>` (Apache) or the site block (Caddy).
    ///   - root: the folder served.
    public init(_ kind: Kind, site: String, root: URL) async throws {
        guard let binary = kind.binary else {
            throw NginxError("\(kind.rawValue) is not installed (Scripts/bootstrap installs it)")
        }
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-\(kind.rawValue)-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        port = try NginxServer.freePort()
        let path = directory.path
        process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        switch kind {
        case .apache:
            let modules = "/usr/lib/apache2/modules"
            // Debian's stock type table, as a packaged Apache reads it. -X keeps one process in the
            // foreground, so the test owns it.
            let configuration = """
                ServerRoot \(path)
                ServerName 127.0.0.1
                Listen 127.0.0.1:\(port)
                PidFile \(path)/httpd.pid
                ErrorLog \(path)/error.log
                Mutex file:\(path)
                LoadModule mpm_event_module \(modules)/mod_mpm_event.so
                LoadModule authz_core_module \(modules)/mod_authz_core.so
                LoadModule mime_module \(modules)/mod_mime.so
                LoadModule headers_module \(modules)/mod_headers.so
                LoadModule rewrite_module \(modules)/mod_rewrite.so
                TypesConfig /etc/mime.types
                <VirtualHost 127.0.0.1:\(port)>
                DocumentRoot \(root.path)
                <Directory \(root.path)>
                Require all granted
                </Directory>
                \(site)
                </VirtualHost>

                """
            try configuration.write(
                to: directory.appendingPathComponent("httpd.conf"), atomically: true, encoding: .utf8)
            process.arguments = ["-X", "-f", "\(path)/httpd.conf"]
        case .caddy:
            let configuration = """
                {
                    admin off
                    auto_https off
                    storage file_system \(path)/data
                }
                http://127.0.0.1:\(port) {
                    root * \(root.path)
                    file_server
                \(site)
                }

                """
            try configuration.write(
                to: directory.appendingPathComponent("Caddyfile"), atomically: true, encoding: .utf8)
            process.arguments = ["run", "--config", "\(path)/Caddyfile", "--adapter", "caddyfile"]
            var environment = ProcessInfo.processInfo.environment
            environment["HOME"] = path
            environment["XDG_DATA_HOME"] = path + "/data"
            environment["XDG_CONFIG_HOME"] = path + "/config"
            process.environment = environment
        }
        process.standardOutput = FileHandle(forWritingAtPath: "/dev/null")
        let log = directory.appendingPathComponent("stderr.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        guard await NginxServer.waitForListener(port: port, timeout: 30) else {
            let output = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            stop()
            throw NginxError("\(kind.rawValue) did not start listening on 127.0.0.1:\(port): \(output.suffix(2_000))")
        }
    }

    deinit { stop() }

    /// Stops the server with SIGKILL (the test process blocks SIGTERM, and a child inherits
    /// the mask) and removes its directory once it has exited, on a thread of its own.
    public func stop() {
        let (process, directory) = (process, directory)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        Thread {
            process.waitUntilExit()
            try? FileManager.default.removeItem(at: directory)
        }.start()
    }

    /// `http://127.0.0.1:PORT` + `path`.
    public func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }
}
