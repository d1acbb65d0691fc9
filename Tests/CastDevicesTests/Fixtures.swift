import CastDevices
import CastDiscovery
import SystemIO

/// Device records as the browser builds them from advertisements, for matching and rendering.
enum Fixtures {
    static let livingRoomID = CastDeviceID("3f1a8e0c5b7d4e2a9c6b1d0e8f7a6b5c")!
    static let livingSpeakerID = CastDeviceID("3f1a000000004000800000000000aa01")!
    static let kitchenID = CastDeviceID("0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a")!
    static let groupID = CastDeviceID("a1b2c3d4e5f64a7b8c9d0e1f2a3b4c5d")!

    /// A record for `service` heard on `lo` (index 1).
    static func record(_ service: MDNSService) -> CastDeviceRecord {
        let v4 = (service.addresses ?? []).compactMap { if case .v4(let a) = $0 { a } else { nil } }.sorted()
        let v6 = (service.addresses ?? []).compactMap { if case .v6(let a) = $0 { a } else { nil } }.sorted()
        return CastDeviceRecord(
            instanceName: service.instanceName, host: service.hostName.description, port: service.port,
            ipv4Addresses: v4, ipv6Addresses: v6, txt: service.txt, interfaceName: "wlan0", interfaceIndex: 3)
    }

    static let livingRoom = record(
        .castDevice(
            id: livingRoomID, friendlyName: "Living Room TV", capabilities: CastCapabilities(rawValue: 4101),
            runningApp: "YouTube",
            addresses: [.v4(IPv4Address("192.0.2.20")!), .v6(IPv6Address("fe80::20")!)]))
    static let livingSpeaker = record(
        .castDevice(
            id: livingSpeakerID, friendlyName: "Living Room speaker", model: "Google Nest Mini",
            capabilities: CastCapabilities(rawValue: 2052),
            addresses: [.v4(IPv4Address("192.0.2.21")!)]))
    static let kitchen = record(
        .castDevice(
            id: kitchenID, friendlyName: "Kitchen", model: "Google Home Mini",
            capabilities: CastCapabilities(rawValue: 2052),
            runningApp: "Spotify", addresses: [.v4(IPv4Address("192.0.2.22")!)]))
    static let group = record(
        .castDevice(
            id: groupID, friendlyName: "Whole house", model: "Google Cast Group", port: 32219,
            capabilities: CastCapabilities(rawValue: 2084),
            addresses: [.v4(IPv4Address("192.0.2.21")!)]))

    static let all = [livingRoom, livingSpeaker, kitchen, group]
}
