import CastDiscovery
import Glibc
import SystemIO

/// A plain UDP socket for playing a third-party querier against the responder: it sends raw
/// DNS messages to the mDNS group and reads replies without blocking the test's thread.
final class QuerierSocket {
    let descriptor: Int32
    let port: UInt16

    /// Binds to `address:port` (port 0 picks a free one, which makes queries "legacy unicast").
    init(address: IPv4Address = IPv4Address(value: 0), port: UInt16 = 0) throws(SocketError) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SocketError(call: "socket", code: errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, 4)
        setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, 4)
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = port.bigEndian
        local.sin_addr = in_addr(s_addr: address.value.bigEndian)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, 16) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw SocketError(call: "bind", code: code)
        }
        var actual = sockaddr_in()
        var length = socklen_t(16)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = fd
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    deinit { close(descriptor) }

    /// Sends `message` to 224.0.0.251:5353 out of `interface`.
    func sendToGroup(_ message: DNSMessage, on interface: NetworkInterface) throws {
        var request = ip_mreqn(
            imr_multiaddr: in_addr(s_addr: 0), imr_address: in_addr(s_addr: 0), imr_ifindex: Int32(interface.index))
        setsockopt(descriptor, Int32(IPPROTO_IP), IP_MULTICAST_IF, &request, socklen_t(MemoryLayout<ip_mreqn>.size))
        try sendRaw(DNSMessageEncoder().encode(message))
    }

    /// Sends raw bytes to the group (on the interface chosen before).
    func sendRaw(_ bytes: [UInt8]) throws(SocketError) {
        var group = sockaddr_in()
        group.sin_family = sa_family_t(AF_INET)
        group.sin_port = UInt16(5353).bigEndian
        group.sin_addr = in_addr(s_addr: IPv4Address.mdnsGroup.value.bigEndian)
        let sent = withUnsafePointer(to: &group) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(descriptor, bytes, bytes.count, 0, $0, 16) }
        }
        guard sent == bytes.count else { throw SocketError(call: "sendto", code: errno) }
    }

    /// The next datagram, decoded, or nil if none arrives within `timeout`. Sleeps between
    /// non-blocking reads instead of blocking a cooperative thread.
    func receive(timeout: Duration) async -> DNSMessage? {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: 9000)
        while ContinuousClock.now < deadline {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0 { return try? DNSMessageDecoder().decode(Array(buffer[..<count])) }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return nil
    }
}

struct SocketError: Error, CustomStringConvertible {
    var call: String
    var code: Int32
    var description: String { "\(call): \(String(cString: strerror(code)))" }
}
