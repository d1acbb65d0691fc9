public import CastDiscovery
public import JSONSupport
public import SystemIO

/// Who the emulated device says it is — in its mDNS TXT record, in `/setup/eureka_info` and in
/// its logs — kept in one place so every channel tells the same story.
public struct DeviceIdentity: Sendable, Hashable {
    /// The device UUID (TXT `id` without hyphens, `ssdp_udn` with them).
    public var id: CastDeviceID
    /// The name a user gave the device (TXT `fn`, eureka `name`).
    public var friendlyName: String
    /// The model (TXT `md`); pychromecast maps "Chromecast" to a video device, "Google Cast
    /// Group" to a group, and asks `/setup/eureka_info` only for models it does not know.
    public var model: String
    /// The manufacturer in eureka `device_info`.
    public var manufacturer: String
    /// What TXT `ca` advertises (video and audio out, like a Chromecast).
    public var capabilities: CastCapabilities
    /// The firmware build a Chromecast with Google TV reported when the reference was written
    /// (`CrKey/1.56.500000` in its user agent); eureka `cast_build_revision`.
    public var castBuildRevision: String
    /// The locale and time zone in eureka_info.
    public var locale: String
    public var timeZone: String

    /// Creates an identity; the id is random unless given (pychromecast requires a valid UUID).
    public init(
        id: CastDeviceID = .random(), friendlyName: String, model: String = "Chromecast",
        manufacturer: String = "Google Inc.",
        capabilities: CastCapabilities = [.videoOut, .audioOut], castBuildRevision: String = "1.56.500000",
        locale: String = "en-US",
        timeZone: String = "UTC"
    ) {
        self.id = id
        self.friendlyName = friendlyName
        self.model = model
        self.manufacturer = manufacturer
        self.capabilities = capabilities
        self.castBuildRevision = castBuildRevision
        self.locale = locale
        self.timeZone = timeZone
    }

    /// A MAC address derived from the id, with the locally-administered bit set and the
    /// multicast bit clear, so it can never collide with a real vendor's address.
    public var macAddress: String {
        var bytes = Array(id.bytes.suffix(6))
        bytes[0] = (bytes[0] & 0xFC) | 0x02
        return bytes.map { byte in
            let digits = String(byte, radix: 16, uppercase: true)
            return digits.count == 1 ? "0" + digits : digits
        }.joined(separator: ":")
    }

    /// The mDNS advertisement: the TXT keys real devices send (`id`, `cd`, `rm`, `ve`, `md`,
    /// `ic`, `fn`, `ca`, `st`, `bs`, `nf`, `rs`) for the Cast port, with `rs`/`st` for `runningApp`.
    ///
    /// - Parameter addresses: the addresses to announce; nil answers with the addresses of the
    ///   interface a query came in on.
    public func advertisement(port: UInt16, runningApp: String = "", appIDs: [String], addresses: [IPAddress]?)
        -> MDNSService
    {
        .castDevice(
            id: id, friendlyName: friendlyName, model: model, port: port, capabilities: capabilities,
            runningApp: runningApp,
            appIDs: appIDs, addresses: addresses)
    }

    /// The `/setup/eureka_info` document: the members pychromecast (`name`, `device_info` with
    /// `model_name`, `manufacturer`, `ssdp_udn`, `capabilities`) and go-chromecast (`name`,
    /// `ip_address`, `locale`, `mac_address`, `ssid`, `timezone`, `ssdp_udn`) read, plus the
    /// build fields devices send. `uptime` is left out: a static document cannot keep it right.
    public func eurekaInfo(ipAddress: String, castPort: Int) -> JSONValue {
        let capabilities: JSONValue = [
            "display_supported": .bool(self.capabilities.contains(.videoOut)),
            "multizone_supported": .bool(self.capabilities.contains(.multizoneGroup)),
            "audio_surround_mode_supported": false,
        ]
        return [
            "name": .string(friendlyName),
            "ssdp_udn": .string(id.hyphenated),
            "uuid": .string(id.hex),
            "cast_build_revision": .string(castBuildRevision),
            "build_version": .string(castBuildRevision),
            "version": 12,
            "locale": .string(locale),
            "timezone": .string(timeZone),
            "ip_address": .string(ipAddress),
            "mac_address": .string(macAddress),
            "ssid": "",
            "cast_port": JSONValue(castPort),
            "device_info": [
                "name": .string(friendlyName),
                "model_name": .string(model),
                "manufacturer": .string(manufacturer),
                "ssdp_udn": .string(id.hyphenated),
                "mac_address": .string(macAddress),
                "capabilities": capabilities,
            ],
            "build_info": [
                "cast_build_revision": .string(castBuildRevision),
                "build_type": 2,
            ],
            "net": ["ip_address": .string(ipAddress), "ethernet_connected": false],
        ]
    }

    /// The 1×1 PNG served at `/setup/icon.png` (TXT `ic`): a single grey pixel, enough for a
    /// sender that shows device icons to get an image rather than a 404.
    public static let iconPNG: [UInt8] = [
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52,
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00, 0x00, 0x00, 0x00, 0x3A, 0x7E, 0x9B,
        0x55, 0x00, 0x00, 0x00, 0x0A, 0x49, 0x44, 0x41, 0x54, 0x78, 0xDA, 0x63, 0x68, 0x00, 0x00, 0x00,
        0x82, 0x00, 0x81, 0xDA, 0x45, 0x08, 0x3B, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE,
        0x42, 0x60, 0x82,
    ]
}
