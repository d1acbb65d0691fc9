import CastDiscovery
import Foundation
import SystemIO

/// Shared, deterministic test data: a Chromecast as real devices advertise it.
enum Fixtures {
    static let deviceID = CastDeviceID("b380c5847b3182e4fb2eb0d0e270bf16")!

    static let chromecast = MDNSService.castDevice(
        id: deviceID, friendlyName: "Living Room TV", capabilities: CastCapabilities(rawValue: 4101),
        appIDs: ["CC1AD845"],
        addresses: [.v4(IPv4Address("192.0.2.10")!), .v6(IPv6Address("fe80::1234")!)])

    /// The response a Chromecast sends to a PTR query: PTR answer, SRV/TXT/A/AAAA/NSEC additionals.
    static var chromecastResponse: DNSMessage {
        let service = chromecast
        let instance = service.instanceFullName
        return .mdnsResponse(
            answers: [DNSResourceRecord(name: .googleCast, ttl: 120, data: .ptr(instance))],
            additionals: [
                DNSResourceRecord(
                    name: instance, ttl: 120, data: .srv(DNSServiceLocation(port: 8009, target: service.hostName)),
                    cacheFlush: true),
                DNSResourceRecord(name: instance, ttl: 4500, data: .txt(service.txt), cacheFlush: true),
                DNSResourceRecord(
                    name: service.hostName, ttl: 120, data: .a(IPv4Address("192.0.2.10")!), cacheFlush: true),
                DNSResourceRecord(
                    name: service.hostName, ttl: 120, data: .aaaa(IPv6Address("fe80::1234")!), cacheFlush: true),
                DNSResourceRecord(
                    name: service.hostName, ttl: 120,
                    data: .nsec(DNSNextSecure(nextName: service.hostName, types: [.a, .aaaa])), cacheFlush: true),
            ])
    }

    /// Hex, 16 bytes a line, for golden files.
    static func hexDump(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: bytes.count, by: 16).map { start in
            let line = bytes[start..<min(start + 16, bytes.count)]
            let hex = line.map {
                String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16)
            }.joined(separator: " ")
            let text = String(line.map { (0x20...0x7E).contains($0) ? Character(UnicodeScalar($0)) : "." })
            let offset = String(start, radix: 16)
            return String(repeating: "0", count: 4 - offset.count) + offset + "  "
                + hex.padding(toLength: 47, withPad: " ", startingAt: 0) + "  " + text
        }.joined(separator: "\n") + "\n"
    }
}
