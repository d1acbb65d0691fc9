import CastModel
public import SystemIO

extension NetworkInterface {
    /// Every interface with its IPv4 and IPv6 addresses, in kernel order.
    /// - Throws: ``CastDiscoveryError`` when the interface list cannot be read.
    public static func all() throws(CastDiscoveryError) -> [NetworkInterface] {
        do {
            return try list()
        } catch {
            throw .system(
                error.call, errno: error.errno, context: "the interface list",
                fix: "check that /proc and /sys are mounted")
        }
    }

    /// The interfaces discovery should use by default: up, multicast-capable and addressed;
    /// loopback only when `includingLoopback` is set (a Cast device is never on loopback).
    public static func usable(includingLoopback: Bool = false) throws(CastDiscoveryError) -> [NetworkInterface] {
        try all().filter { $0.isUsableForMulticast && (includingLoopback || !$0.isLoopback) }
    }

    /// The interfaces with these names, in the order given.
    /// - Throws: ``CastDiscoveryError`` (`discovery.interface`) naming any unknown interface and
    ///   listing the ones that exist.
    public static func named(_ names: [String]) throws(CastDiscoveryError) -> [NetworkInterface] {
        let available = try all()
        return try names.map { name throws(CastDiscoveryError) in
            guard let found = available.first(where: { $0.name == name }) else {
                throw CastDiscoveryError(
                    Diagnostic(
                        .error, .discoveryInterface, "no network interface named '\(name)'",
                        fix: "use one of: \(available.map(\.name).joined(separator: ", "))"))
            }
            return found
        }
    }
}
