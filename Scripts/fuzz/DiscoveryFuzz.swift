// libFuzzer entry point for the mDNS / DNS-SD decoders and the engines that consume them.
// Built by Scripts/fuzz/discovery; DISCOVERY_FUZZ_TARGET picks what the input is fed to:
//   dns        DNSMessageDecoder; whatever decodes must re-encode and decode to the same message
//   txt        TXT record data through the decoder, DNS-SD attribute rules and CastDeviceRecord
//   text       DNSName, CastDeviceID, IPv4Address and IPv6Address text parsers (round trips)
//   browser    a sequence of packets and clock steps through the browser's cache and resolution
//   responder  a sequence of packets through the responder's query answering
// The engines run without sockets, so nothing is sent anywhere.
@testable import CastDiscovery
import Glibc
import SystemIO

/// Which entry point to exercise, read once.
let fuzzTarget: String = getenv("DISCOVERY_FUZZ_TARGET").map { String(cString: $0) } ?? "dns"

let loopback = NetworkInterface(name: "lo", index: 1, isLoopback: true, ipv4Addresses: [.loopback], ipv6Addresses: [.loopback])
let advertised = MDNSService.castDevice(id: CastDeviceID("b380c5847b3182e4fb2eb0d0e270bf16")!, friendlyName: "Living Room TV",
                                        appIDs: ["CC1AD845"])

/// Splits the input into (packet, clock step in seconds) pairs: 2-byte length, 1-byte step, packet.
func packets(_ bytes: [UInt8]) -> [(bytes: [UInt8], step: Int)] {
    var result: [([UInt8], Int)] = []
    var rest = bytes[...]
    while rest.count >= 3, result.count < 32 {
        let length = Int(rest[rest.startIndex]) << 8 | Int(rest[rest.startIndex + 1])
        let step = Int(rest[rest.startIndex + 2])
        rest = rest.dropFirst(3)
        let packet = Array(rest.prefix(length))
        rest = rest.dropFirst(packet.count)
        result.append((packet, step))
    }
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    switch fuzzTarget {
    case "dns":
        guard let message = try? DNSMessageDecoder().decode(bytes) else { return 0 }
        _ = message.description
        if let again = try? DNSMessageEncoder().encode(message) {
            guard let back = try? DNSMessageDecoder().decode(again), back == message else { fatalError("DNS round trip changed the message") }
        }
    case "txt":
        guard bytes.count <= 8000 else { return 0 }
        // One TXT answer for the root name whose data is the input.
        let packet: [UInt8] = [0, 0, 0x84, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 16, 0, 1, 0, 0, 0, 10, UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes
        guard let message = try? DNSMessageDecoder().decode(packet), case .txt(let txt) = message.answers.first?.data else { return 0 }
        let attributes = txt.attributes
        var keys = Set<String>()
        for attribute in attributes {
            guard keys.insert(DNSName.fold(attribute.key)).inserted, !attribute.key.isEmpty else { fatalError("duplicate or empty key survived") }
        }
        let record = CastDeviceRecord(instanceName: "fuzz", host: "h.local", port: 8009, txt: txt)
        _ = (record.description, record.isGroup, record.capabilities?.names)
        let updated = txt.setting("rs", to: "YouTube")
        guard updated.string(for: "rs") == "YouTube" else { fatalError("setting rs did not take") }
    case "text":
        let text = String(decoding: bytes.prefix(1024), as: UTF8.self)
        let name = DNSName(text)
        guard DNSName(name.description) == name else { fatalError("DNSName presentation round trip failed for \(name.labels)") }
        if let id = CastDeviceID(text), CastDeviceID(id.hex) != id || CastDeviceID(id.hyphenated) != id { fatalError("device id round trip") }
        if let v4 = IPv4Address(text), IPv4Address(v4.description) != v4 { fatalError("IPv4 round trip") }
        if let v6 = IPv6Address(text), IPv6Address(v6.description) != v6 { fatalError("IPv6 round trip") }
    case "browser":
        let (_, continuation) = AsyncStream.makeStream(of: CastDiscoveryEvent.self, bufferingPolicy: .bufferingNewest(16))
        let engine = BrowserEngine(configuration: .init(), interfaces: [loopback], sockets: [], shared: BrowserSharedState(), continuation: continuation)
        var now = ContinuousClock.now
        engine.start(now: now)
        let source = DatagramAddress(address: .v4(IPv4Address("127.0.0.2")!), port: 5353)
        for (packet, step) in packets(bytes) {
            engine.handle(Datagram(bytes: packet, source: source, interfaceIndex: 1), now: now)
            now = now + .seconds(step)
            _ = engine.fire(now: now)
        }
        continuation.finish()
    case "responder":
        let engine = ResponderEngine(service: advertised, interfaces: [loopback], sockets: [])
        var now = ContinuousClock.now
        engine.start(now: now)
        for (packet, step) in packets(bytes) {
            let port: UInt16 = step & 1 == 0 ? 5353 : 40000
            engine.handle(Datagram(bytes: packet, source: DatagramAddress(address: .v4(.loopback), port: port), interfaceIndex: 1), now: now)
            now = now + .milliseconds(step * 10)
            _ = engine.fire(now: now)
        }
    default:
        fatalError("unknown DISCOVERY_FUZZ_TARGET \(fuzzTarget)")
    }
    return 0
}
