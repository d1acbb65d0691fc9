import CastModel
import SystemIO

/// The mDNS port, 5353 (RFC 6762 §3).
let mdnsPort: UInt16 = 5353

/// A non-blocking UDP socket bound to port 5353 and joined to the mDNS group on chosen interfaces.
///
/// One socket per address family serves every interface: SystemIO's ``UDPMulticastSocket``
/// tells on which interface a packet arrived and sends out of a chosen one, shares the port
/// with the system's own mDNS daemon and with other CastPrep responders, and hears only the
/// groups it joined itself. Owned by one event-loop thread.
final class MulticastSocket {
    typealias Family = UDPMulticastSocket.Family
    typealias Received = UDPMulticastSocket.Received

    private let socket: UDPMulticastSocket
    var family: Family { socket.family }
    var descriptor: Int32 { socket.descriptor }
    /// Interfaces whose group membership succeeded.
    private(set) var joined: [NetworkInterface] = []
    /// Interfaces whose join failed, with the errno text, for diagnostics.
    private(set) var joinFailures: [(interface: NetworkInterface, error: String)] = []

    /// Opens, binds and joins. Interfaces without an address of this family are skipped.
    /// - Throws: ``CastDiscoveryError`` when the socket cannot be created or bound, or no join succeeded.
    init(family: Family, interfaces: [NetworkInterface], port: UInt16 = mdnsPort) throws(CastDiscoveryError) {
        do {
            socket = try UDPMulticastSocket(
                family: family, port: port, maximumDatagramSize: DNSMessageDecoder.maximumPacketSize)
        } catch  where error.call == "bind" {
            throw .system(
                "bind", errno: error.errno, context: "UDP port \(port) (\(family.rawValue))",
                fix:
                    "another program holds port \(port) without SO_REUSEADDR; stop it or run CastPrep with the same user"
            )
        } catch {
            throw .system(
                error.call, errno: error.errno, context: "an \(family.rawValue) UDP socket",
                fix: "check the process's file-descriptor limit")
        }
        let group: IPAddress = family == .ipv4 ? .v4(.mdnsGroup) : .v6(.mdnsGroup)
        for interface in interfaces {
            switch socket.join(group: group, on: interface) {
            case .joined: joined.append(interface)
            case .noAddress: break
            case .failed(let error): joinFailures.append((interface, error.reason))
            }
        }
        guard !joined.isEmpty else {
            let failures = joinFailures.map { "\($0.interface.name): \($0.error)" }.joined(separator: "; ")
            throw CastDiscoveryError(
                Diagnostic(
                    .error, .discoverySocketFailed,
                    "could not join the \(family.rawValue) mDNS group on any interface\(failures.isEmpty ? " (none has an \(family.rawValue) address)" : ": " + failures)",
                    fix:
                        "pass interfaces that are up, have the MULTICAST flag (ip link set DEV multicast on) and an address"
                ))
        }
    }

    /// Reads one datagram without blocking.
    func receive() -> Received { socket.receive() }

    /// Sends to the mDNS group on one interface; returns nil or the errno.
    func sendMulticast(_ bytes: [UInt8], on interface: NetworkInterface) -> Int32? {
        let group: IPAddress = family == .ipv4 ? .v4(.mdnsGroup) : .v6(.mdnsGroup)
        return socket.sendMulticast(bytes, to: group, port: mdnsPort, on: interface)?.errno
    }

    /// Sends one datagram; returns nil or the errno.
    func send(_ bytes: [UInt8], to destination: DatagramAddress) -> Int32? {
        socket.send(bytes, to: destination)?.errno
    }
}

@available(*, unavailable)
extension MulticastSocket: Sendable {}
