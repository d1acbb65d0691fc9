import CastModel
import CommandParsing
import Dispatch
import Foundation
import MediaServer
import Synchronization

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
                Runs until interrupted (Ctrl-C or SIGTERM). One line per request goes to stderr unless --quiet.
                """,
            options: [
                .option("port", short: "p", valueName: "n", help: "TCP port to listen on; 0 picks a free one.", default: "8000"),
                .option("bind", valueName: "addr", help: "Local address to listen on and advertise (default: every IPv4 interface)."),
                .option("device", valueName: "addr", help: "Address of the Cast device; the URL uses the local address that routes to it."),
                .option("advertise", valueName: "host", help: "Host to put in the printed URL instead of choosing one."),
                .repeating("mount", valueName: "prefix=dir", help: "Also serve a directory under a URL prefix, e.g. /captions=out/captions."),
                .repeating("origin", valueName: "origin", help: "Allow only this origin to read from script (default: every origin, '*')."),
                .flag("credentials", help: "Allow credentialed requests (echoes the origin instead of '*')."),
                .option("max-connections", valueName: "n", help: "Connections open at once, in total.", default: "256"),
                .option("max-per-address", valueName: "n", help: "Connections open at once from one address (0: no limit).", default: "64"),
                .option("timeout", valueName: "seconds", help: "Close a connection after this long without traffic.", default: "30"),
                .flag("quiet", short: "q", help: "Do not log requests."),
                CommonOptions.color,
            ],
            arguments: [ArgumentSpec(name: "dir", help: "The directory to serve at /.")],
            run: { values, io in try await run(values, io: io) })
    }

    static func run(_ values: ParsedValues, io: CommandIO) async throws -> Int32 {
        let directory = values.argument("dir") ?? "."
        let port = try values.integer("port", in: 0...65_535) ?? 8000
        var configuration = MediaServerConfiguration(mounts: [.init(urlPrefix: "/", directory: directory)], port: UInt16(port))
        for mount in values.options("mount") {
            guard let equals = mount.firstIndex(of: "="), mount.hasPrefix("/"), equals != mount.index(before: mount.endIndex) else {
                throw values.usageError("the mount '\(mount)' is not PREFIX=DIR with a prefix starting with '/'", concerning: "mount")
            }
            configuration.mounts.append(.init(urlPrefix: String(mount[..<equals]), directory: String(mount[mount.index(after: equals)...])))
        }
        configuration.bindAddress = values.option("bind")
        configuration.reachableFrom = values.option("device")
        configuration.advertisedHost = values.option("advertise")
        let origins = values.options("origin")
        configuration.cors = CORSPolicy(allowedOrigins: origins.isEmpty ? .any : .only(origins), allowsCredentials: values.flag("credentials"))
        configuration.limits.maximumConnections = try values.integer("max-connections", in: 1...65_536) ?? 256
        configuration.limits.maximumConnectionsPerAddress = try values.integer("max-per-address", in: 0...65_536) ?? 64
        configuration.limits.idleTimeoutSeconds = try values.integer("timeout", in: 1...86_400) ?? 30
        if !values.flag("quiet") {
            configuration.requestLog = { entry in io.writeErrorLine(entry.description) }
        }

        let server = MediaServer(configuration: configuration)
        let endpoint: MediaServer.Endpoint
        do {
            endpoint = try await BlockingWork.run { try server.start() }
        } catch let error as MediaServerError {
            DiagnosticPrinter(io: io, colorMode: CommonOptions.colorMode(values)).print([error.diagnostic])
            return 1
        }
        io.write(describe(endpoint, configuration: configuration))
        io.writeErrorLine("castprep: serving until interrupted (Ctrl-C or SIGTERM)")
        let signal = await TerminationSignal.next()
        try await BlockingWork.run { server.stop() }
        io.writeErrorLine("castprep: stopped (\(signal == SIGINT ? "SIGINT" : "SIGTERM"))")
        return 0
    }

    /// The lines printed on start: where the media is, and why that address.
    static func describe(_ endpoint: MediaServer.Endpoint, configuration: MediaServerConfiguration) -> String {
        let root = configuration.mounts.first?.directory ?? "."
        var text = "Serving \(root) at \(endpoint.baseURL) (bound to \(hostPort(endpoint.boundAddress, endpoint.port)))\n"
        for mount in configuration.mounts.dropFirst() {
            text += "  \(endpoint.url(forPath: mount.urlPrefix.hasSuffix("/") ? mount.urlPrefix : mount.urlPrefix + "/")) serves \(mount.directory)\n"
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

/// Waits for SIGINT or SIGTERM without blocking a thread: the default actions are turned off
/// and Dispatch signal sources report the signal instead.
final class TerminationSignal: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Int32, Never>?
        var sources: [any DispatchSourceSignal] = []
    }

    private static let queue = DispatchQueue(label: "castprep.serve.signals")
    private let state = Mutex(State())

    private init() {}

    /// The first SIGINT or SIGTERM that arrives from now on.
    static func next() async -> Int32 {
        let waiter = TerminationSignal()
        return await withCheckedContinuation { continuation in
            waiter.state.withLock { $0.continuation = continuation }
            queue.async { waiter.install() }
        }
    }

    /// Turns off the default actions and installs the sources; each keeps this object alive
    /// (through its handler) until the first signal cancels them all.
    private func install() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            state.withLock { state in
                let source = DispatchSource.makeSignalSource(signal: number, queue: Self.queue)
                source.setEventHandler { self.deliver(number) }
                source.resume()
                state.sources.append(source)
            }
        }
    }

    private func deliver(_ number: Int32) {
        let (continuation, sources) = state.withLock { state in
            let taken = (state.continuation, state.sources)
            state.continuation = nil
            state.sources = []
            return taken
        }
        sources.forEach { $0.cancel() }
        continuation?.resume(returning: number)
    }
}
