import Foundation
import Glibc
import Synchronization

/// Listens to an IPv4 multicast group as another host on the link would (mDNS's 224.0.0.251
/// port 5353 by default), so a test can wait for what the process under test or a responder
/// multicasts instead of sleeping for it. Each wait blocks in `poll` on a thread of its own,
/// never on the cooperative pool. For tests inside a private network namespace only.
public final class MulticastGroupWatcher: Sendable {
    private let descriptor: Int32

    /// Binds the group's port (shared with the other listeners on it) and joins the group on
    /// the interface with index `interfaceIndex`.
    public init(interfaceIndex: Int32, group: String = "224.0.0.251", port: UInt16 = 5353) throws {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard socketDescriptor >= 0 else { throw Self.failure("socket") }
        var on: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_REUSEADDR, &on, size)
        setsockopt(socketDescriptor, SOL_SOCKET, SO_REUSEPORT, &on, size)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socketDescriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        var membership = ip_mreqn(
            imr_multiaddr: in_addr(s_addr: inet_addr(group)), imr_address: in_addr(s_addr: 0),
            imr_ifindex: interfaceIndex)
        let joined = setsockopt(
            socketDescriptor, Int32(IPPROTO_IP), IP_ADD_MEMBERSHIP, &membership,
            socklen_t(MemoryLayout<ip_mreqn>.size))
        guard bound == 0, joined == 0 else {
            let error = Self.failure(bound != 0 ? "bind" : "IP_ADD_MEMBERSHIP")
            close(socketDescriptor)
            throw error
        }
        descriptor = socketDescriptor
    }

    deinit { close(descriptor) }

    /// Waits up to `seconds` for a datagram whose bytes `matching` accepts; false if none came.
    public func waitFor(within seconds: Double = 20, _ matching: @escaping @Sendable ([UInt8]) -> Bool) async -> Bool {
        // The closure holds `self`, so the socket stays open while the thread waits on it.
        await offPool { [self] () -> Bool in
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            var buffer = [UInt8](repeating: 0, count: 9000)
            while ContinuousClock.now < deadline {
                var request = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let left = deadline - ContinuousClock.now
                let milliseconds = Int32(max(1, (left / .milliseconds(1)).rounded(.up)))
                guard poll(&request, 1, milliseconds) == 1 else { continue }
                let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count > 0, matching(Array(buffer[..<count])) { return true }
            }
            return false
        }
    }

    private static func failure(_ call: String) -> CocoaError {
        CocoaError(
            .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(call): \(String(cString: strerror(errno)))"])
    }
}
