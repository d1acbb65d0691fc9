import CastModel
import CommandParsing
import Foundation
import MediaServer
import Synchronization
import SystemIO

/// `castprep serve DIR`: serve local media to a Cast device with the headers it needs.
enum ServeCommand {
    static var spec: CommandSpec {
        CommandSpec(
            name: "serve",
            abstract: "Serve a directory to Cast devices with correct types, ranges and CORS.",
            discussion: """
                Serves the regular files below DIR over HTTP the way a Cast receiver fetches them: a Content-Type for \
                every media, playlist, caption and image type; single, open and suffix byte ranges (206, or 416 with \
                bytes */SIZE; several ranges get the whole file with 200); HEAD; OPTIONS preflights; CORS headers on \
                every response; ETag and Last-Modified with 304. Directories are never listed, hidden files are not \
                served, and nothing outside DIR is reachable ('..', encoded or not, and symbolic links leading out). \
                Connections are limited in total and per address, and a silent connection is closed after --timeout.

                The printed URL uses the address a Cast device can reach: the one the kernel routes to --device \
                when given, else the first LAN interface (every candidate is listed), or the --bind address. \
                By default anyone who can reach this machine may read every file below DIR, from any web page (CORS \
                '*'), which the first line says; --bind, --allow, --token and --origin restrict that.

                Runs until interrupted (Ctrl-C or SIGTERM). One line per request goes to stderr unless --quiet.
                """,
            options: [
                .option(
                    "port", short: "p", valueName: "n", help: "TCP port to listen on; 0 picks a free one.",
                    default: "8000"),
                .option(
                    "bind", valueName: "addr",
                    help: "Local address to listen on and advertise (default: every IPv4 interface)."),
                .option(
                    "device", valueName: "addr",
                    help: "Address of the Cast device; the URL uses the local address that routes to it."),
                .option(
                    "advertise", valueName: "host", help: "Host to put in the printed URL instead of choosing one."),
                .repeating(
                    "mount", valueName: "prefix=dir",
                    help: "Also serve a directory under a URL prefix, e.g. /captions=out/captions."),
                .repeating(
                    "origin", valueName: "origin",
                    help:
                        "Allow only this origin to read from script (repeatable; default: every origin, '*'). The Default Media Receiver's is https://www.gstatic.com."
                ),
                .flag("credentials", help: "Allow credentialed requests (echoes the origin instead of '*')."),
                .option("max-connections", valueName: "n", help: "Connections open at once, in total.", default: "256"),
                .option(
                    "max-per-address", valueName: "n", help: "Connections open at once from one address (0: no limit).",
                    default: "64"),
                .option(
                    "timeout", valueName: "seconds", help: "Close a connection after this long without traffic.",
                    default: "30"),
                .repeating(
                    "allow", valueName: "addr|cidr",
                    help:
                        "Answer only these clients, e.g. 192.168.1.50 or 192.168.1.0/24 or fd00::/8 (repeatable); others get 403."
                ),
                .flag(
                    "token",
                    help: "Serve under a random secret path prefix, printed in the URL; requests without it get 404."),
                .flag("quiet", short: "q", help: "Do not log requests."),
                CommonOptions.color,
            ],
            arguments: [ArgumentSpec(name: "dir", help: "The directory to serve at /.")],
            examples: examples,
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let directory = values.argument("dir") ?? "."
        let port = try values.integer("port", in: 0...65_535) ?? 8000
        var configuration = MediaServerConfiguration(
            mounts: [.init(urlPrefix: "/", directory: directory)], port: UInt16(port))
        for mount in values.options("mount") {
            guard let equals = mount.firstIndex(of: "="), mount.hasPrefix("/"),
                equals != mount.index(before: mount.endIndex)
            else {
                throw values.usageError(
                    "the mount '\(mount)' is not PREFIX=DIR with a prefix starting with '/'", concerning: "mount")
            }
            configuration.mounts.append(
                .init(urlPrefix: String(mount[..<equals]), directory: String(mount[mount.index(after: equals)...])))
        }
        configuration.bindAddress = values.option("bind")
        configuration.reachableFrom = values.option("device")
        configuration.advertisedHost = values.option("advertise")
        let origins = values.options("origin")
        configuration.cors = CORSPolicy(
            allowedOrigins: origins.isEmpty ? .any : .only(origins), allowsCredentials: values.flag("credentials"))
        configuration.limits.maximumConnections = try values.integer("max-connections", in: 1...65_536) ?? 256
        configuration.limits.maximumConnectionsPerAddress = try values.integer("max-per-address", in: 0...65_536) ?? 64
        configuration.limits.idleTimeoutSeconds = try values.integer("timeout", in: 1...86_400) ?? 30
        let allowed = values.options("allow")
        if !allowed.isEmpty {
            do {
                configuration.allowedClients = try ClientAllowList(allowed)
            } catch {
                throw values.usageError(error.message, concerning: "allow")
            }
        }
        if values.flag("token") { configuration.pathToken = PathToken.random() }
        // One write per batch of lines rather than per request: a write costs more than a HEAD.
        let requestLog = values.flag("quiet") ? nil : BatchedLineWriter { io.writeError($0) }
        if let requestLog {
            configuration.requestLog = { entry in requestLog.append(entry.description) }
        }

        let printer = DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values))
        if !origins.isEmpty, !origins.contains(where: { $0.lowercased() == receiverOrigin }) {
            printer.print([
                Diagnostic(
                    .warning, "serve.origin-list-excludes-receiver",
                    "the allowed origins leave out \(receiverOrigin), where the Default Media Receiver runs; it will not load this media",
                    fix: "add --origin \(receiverOrigin), or leave --origin out to allow every origin")
            ])
        }
        let server = MediaServer(configuration: configuration)
        let endpoint: MediaServer.Endpoint
        do {
            endpoint = try await BlockingWork.run { try server.start() }
        } catch let error as MediaServerError {
            printer.print([error.diagnostic])
            return 1
        }
        // Listen for the stop signals before printing the URL: whoever reads it may signal at once.
        guard let termination = TerminationSignal.install() else {
            try await BlockingWork.run {
                server.stop()
                requestLog?.stop()
            }
            io.writeErrorLine("Error: cannot listen for SIGINT and SIGTERM: \(String(cString: strerror(errno)))")
            return 1
        }
        io.writeErrorLine(exposure(endpoint, configuration: configuration))
        io.write(describe(endpoint, configuration: configuration))
        io.writeErrorLine("castprep: serving until interrupted (Ctrl-C or SIGTERM)")
        let signal = await termination.wait()
        // The server threads end first, so every request they answered is in the log before
        // the last line.
        try await BlockingWork.run {
            server.stop()
            requestLog?.stop()
        }
        io.writeErrorLine("castprep: stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM"))")
        return 0
    }

    /// One line saying who can read what is served, printed before the URL.
    static func exposure(_ endpoint: MediaServer.Endpoint, configuration: MediaServerConfiguration) -> String {
        let everyInterface = endpoint.boundAddress == "0.0.0.0" || endpoint.boundAddress == "::"
        let listening = everyInterface ? "every interface" : hostPort(endpoint.boundAddress, endpoint.port)
        let clients =
            configuration.allowedClients.map { "clients \($0.ranges.map(\.description).joined(separator: ", ")) only" }
            ?? "any client"
        let origins =
            configuration.cors.allowedOrigins == .any
            ? "any web page (Access-Control-Allow-Origin: *)" : "the --origin pages only"
        let paths = configuration.pathToken == nil ? "every file by its path" : "files under the secret path only"
        return "castprep: listening on \(listening), answering \(clients), \(paths), for \(origins)"
            + (configuration.allowedClients == nil && configuration.pathToken == nil
                ? "; restrict with --bind, --allow, --token, --origin" : "")
    }

    /// The origin of Google's Default Media Receiver and styled receivers.
    static let receiverOrigin = "https://www.gstatic.com"

    /// The lines printed on start: where the media is, and why that address.
    static func describe(_ endpoint: MediaServer.Endpoint, configuration: MediaServerConfiguration) -> String {
        let root = configuration.mounts.first?.directory ?? "."
        var text =
            "Serving \(root) at \(endpoint.baseURL) (bound to \(hostPort(endpoint.boundAddress, endpoint.port)))\n"
        for mount in configuration.mounts.dropFirst() {
            text +=
                "  \(endpoint.url(forPath: mount.urlPrefix.hasSuffix("/") ? mount.urlPrefix : mount.urlPrefix + "/")) serves \(mount.directory)\n"
        }
        text += "  address: \(endpoint.addressChoice.explanation)\n"
        let others = endpoint.addressChoice.candidates.filter { $0.address != endpoint.addressChoice.host }
        if endpoint.boundAddress == "0.0.0.0" || endpoint.boundAddress == "::" {
            for other in others {
                text += "  also: http://\(other.address):\(endpoint.port)/ (\(other.interface))\n"
            }
        }
        return text
    }

    private static func hostPort(_ host: String, _ port: UInt16) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
