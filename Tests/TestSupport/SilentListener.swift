import Foundation
import Glibc
import Synchronization

/// A loopback port that accepts connections and never answers: whatever fetches from it waits
/// for its own timeout or cancellation. ``connection(within:)`` tells a test when a client has
/// connected, so a test can act on a request that is under way without sleeping first.
public final class SilentListener: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    private let descriptor: Int32
    private let accepted = Mutex<[Int32]>([])

    /// Binds 127.0.0.1 on a port the kernel picks and listens.
    public init() throws {
        let socketDescriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socketDescriptor, $0, length) }
        }
        guard socketDescriptor >= 0, bound == 0, listen(socketDescriptor, 64) == 0 else {
            if socketDescriptor >= 0 { close(socketDescriptor) }
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot listen on 127.0.0.1"])
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socketDescriptor, $0, &length) }
        }
        descriptor = socketDescriptor
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        for client in accepted.withLock({ $0 }) { close(client) }
        close(descriptor)
    }

    /// Waits, on a thread of its own, until a client connects, and holds that connection open
    /// (unanswered) until the listener goes away. False when none came within `seconds`.
    public func connection(within seconds: Int32 = 30) async -> Bool {
        let listener = descriptor
        let client = await offPool { () -> Int32 in
            var request = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&request, 1, seconds * 1000) == 1 else { return -1 }
            return accept(listener, nil, nil)
        }
        guard client >= 0 else { return false }
        accepted.withLock { $0.append(client) }
        return true
    }
}
