/// A Cast device id: a UUID, written as 32 hex digits without hyphens in the `id` TXT key.
///
/// pychromecast drops any device whose `id` is not a valid UUID, so advertisements must use a
/// real one; the SRV host name uses the hyphenated form (`b380c584-7b31-82e4-fb2e-b0d0e270bf16.local`).
///
/// ```swift
/// let id = CastDeviceID("b380c5847b3182e4fb2eb0d0e270bf16")   // also accepts the hyphenated form
/// id?.hex          // "b380c5847b3182e4fb2eb0d0e270bf16"
/// id?.hyphenated   // "b380c584-7b31-82e4-fb2e-b0d0e270bf16"
/// ```
public struct CastDeviceID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The sixteen bytes.
    public let bytes: [UInt8]

    /// Creates an id from exactly sixteen bytes; nil otherwise.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses 32 hex digits, with or without the four UUID hyphens (8-4-4-4-12), any case.
    public init?(_ text: String) {
        var digits = Array(text.utf8)
        if digits.count == 36 {
            guard [8, 13, 18, 23].allSatisfy({ digits[$0] == UInt8(ascii: "-") }) else { return nil }
            digits.removeAll { $0 == UInt8(ascii: "-") }
        }
        guard digits.count == 32 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for pair in stride(from: 0, to: 32, by: 2) {
            guard let high = hexValue(digits[pair]), let low = hexValue(digits[pair + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self.bytes = bytes
    }

    /// A random version-4 UUID.
    public static func random() -> CastDeviceID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40  // version 4
        bytes[8] = bytes[8] & 0x3F | 0x80  // RFC 4122 variant
        return CastDeviceID(bytes: bytes) ?? CastDeviceID.zero
    }

    private static let zero = CastDeviceID(bytes: [UInt8](repeating: 0, count: 16))!

    /// 32 lowercase hex digits, the TXT `id` form.
    public var hex: String { bytes.map(hexByte).joined() }

    /// The 8-4-4-4-12 form, used for the host name.
    public var hyphenated: String {
        let hex = Array(self.hex)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
    }

    public var description: String { hex }

    public static func < (lhs: CastDeviceID, rhs: CastDeviceID) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

private func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// The `ca` TXT bitfield: what a device can do (Chromium `cast_device_capability.h`).
///
/// Devices set undocumented higher bits too (4101, 2052 and 199172 have been seen); they are
/// kept in ``rawValue`` and listed by ``names`` as `bitN`.
public struct CastCapabilities: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// Bit 0: can show video.
    public static let videoOut = CastCapabilities(rawValue: 1 << 0)
    /// Bit 1: has a camera/video input.
    public static let videoIn = CastCapabilities(rawValue: 1 << 1)
    /// Bit 2: can play audio.
    public static let audioOut = CastCapabilities(rawValue: 1 << 2)
    /// Bit 3: has a microphone/audio input.
    public static let audioIn = CastCapabilities(rawValue: 1 << 3)
    /// Bit 4: developer mode is on.
    public static let developerMode = CastCapabilities(rawValue: 1 << 4)
    /// Bit 5: the device is a multizone (speaker) group.
    public static let multizoneGroup = CastCapabilities(rawValue: 1 << 5)

    private static let named: [(CastCapabilities, String)] = [
        (.videoOut, "video-out"), (.videoIn, "video-in"), (.audioOut, "audio-out"), (.audioIn, "audio-in"),
        (.developerMode, "dev-mode"), (.multizoneGroup, "multizone-group"),
    ]

    /// The set bits by name, known ones first, then `bitN` for the rest.
    public var names: [String] {
        var names = Self.named.filter { contains($0.0) }.map(\.1)
        for bit in 6..<64 where rawValue & (1 << UInt64(bit)) != 0 { names.append("bit\(bit)") }
        return names
    }

    public var description: String { names.isEmpty ? "none" : names.joined(separator: ",") }
}
