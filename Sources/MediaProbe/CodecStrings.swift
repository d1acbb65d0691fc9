/// RFC 6381 codec strings derived from codec configuration records, as Cast receivers and MSE
/// expect them in `contentType`, HLS `CODECS=` and DASH `@codecs`.
///
/// Derivations follow the ISO/IEC 14496-15 (avcC, hvcC), VP9 codec ISO-BMFF binding (vpcC) and
/// AV1 ISO-BMFF binding (av1C) layouts; when a record is missing, nil is returned rather than a
/// guess, and the content type is then written without `codecs`.
public enum CodecStrings {
    /// `avc1.PPCCLL` from an avcC record (bytes 1–3: profile, constraint flags, level).
    /// `avc3` when parameter sets travel in-band (`isInBand`).
    public static func avc(avcC: [UInt8], isInBand: Bool = false) -> String? {
        guard avcC.count >= 4, avcC[0] == 1 else { return nil }
        return (isInBand ? "avc3." : "avc1.") + hex(avcC[1]) + hex(avcC[2]) + hex(avcC[3])
    }

    /// `avc1.PPCCLL` from FFmpeg's profile and level when no avcC is available (Annex B streams,
    /// e.g. MPEG-TS): the constraint byte is the usual one for the profile.
    public static func avc(profile: Int, level: Int) -> String? {
        guard profile > 0, level > 0, level < 256 else { return nil }
        let constraint: UInt8 =
            switch profile {
            case 66: 0xE0  // Constrained Baseline in practice
            case 77: 0x40
            default: 0x00
            }
        return "avc1." + hex(UInt8(truncatingIfNeeded: profile)) + hex(constraint)
            + hex(UInt8(truncatingIfNeeded: level))
    }

    /// `hvc1.[A-C]P.C.TL.CC…` from an hvcC record: profile space and idc, the 32 compatibility
    /// flags bit-reversed, tier and level, then the six constraint bytes without trailing zeros.
    public static func hevc(hvcC: [UInt8], isInBand: Bool = false) -> String? {
        guard hvcC.count >= 13, hvcC[0] == 1 else { return nil }
        let profileSpace = hvcC[1] >> 6
        let tier = (hvcC[1] >> 5) & 1
        let profileIDC = hvcC[1] & 0x1F
        var compatibility: UInt32 = 0
        for offset in 2..<6 { compatibility = compatibility << 8 | UInt32(hvcC[offset]) }
        let constraints = Array(hvcC[6..<12])
        let level = hvcC[12]
        var text = isInBand ? "hev1." : "hvc1."
        text += ["", "A", "B", "C"][Int(profileSpace)] + String(profileIDC)
        text += "." + String(reversedBits(compatibility), radix: 16, uppercase: true)
        text += "." + (tier == 1 ? "H" : "L") + String(level)
        var trimmed = constraints
        while let last = trimmed.last, last == 0 { trimmed.removeLast() }
        for byte in trimmed { text += "." + String(byte, radix: 16, uppercase: true) }
        return text
    }

    /// `vp09.PP.LL.DD` from profile, level (×10) and bit depth.
    public static func vp9(profile: Int, level: Int, bitDepth: Int) -> String? {
        guard (0...3).contains(profile), level > 0, [8, 10, 12].contains(bitDepth) else { return nil }
        return "vp09." + twoDigits(profile) + "." + twoDigits(level) + "." + twoDigits(bitDepth)
    }

    /// The VP9 level a stream needs, from its picture size and luma sample rate (VP9
    /// bitstream specification, Annex A level limits); webm files do not store it.
    public static func vp9Level(width: Int, height: Int, frameRate: Double) -> Int? {
        guard width > 0, height > 0, frameRate > 0 else { return nil }
        let picture = width * height
        let rate = Double(picture) * frameRate
        let table: [(level: Int, picture: Int, rate: Double)] = [
            (10, 36_864, 829_440), (11, 73_728, 2_764_800), (20, 122_880, 4_608_000), (21, 245_760, 9_216_000),
            (30, 552_960, 20_736_000), (31, 983_040, 36_864_000), (40, 2_228_224, 83_558_400),
            (41, 2_228_224, 160_432_128), (50, 8_912_896, 311_951_360), (51, 8_912_896, 588_251_136),
            (52, 8_912_896, 1_176_502_272), (60, 35_651_584, 1_176_502_272), (61, 35_651_584, 2_353_004_544),
            (62, 35_651_584, 4_706_009_088),
        ]
        return table.first { picture <= $0.picture && rate <= $0.rate }?.level
    }

    /// `av01.P.LLT.DD` from an av1C record (profile, seq_level_idx, tier, bit depth).
    public static func av1(av1C: [UInt8]) -> String? {
        guard av1C.count >= 4, av1C[0] & 0x80 != 0 else { return nil }
        let profile = av1C[1] >> 5
        let levelIndex = av1C[1] & 0x1F
        let tier = av1C[2] >> 7
        let highBitDepth = (av1C[2] >> 6) & 1
        let twelveBit = (av1C[2] >> 5) & 1
        let bitDepth = highBitDepth == 1 ? (twelveBit == 1 ? 12 : 10) : 8
        return "av01.\(profile)." + twoDigits(Int(levelIndex)) + (tier == 1 ? "H" : "M") + "." + twoDigits(bitDepth)
    }

    /// `mp4a.40.N` for AAC from FFmpeg's profile number (0-based audio object type minus one).
    public static func aac(ffmpegProfile: Int) -> String? {
        // FFmpeg's FF_PROFILE_AAC_* values are the MPEG-4 audio object type minus one.
        switch ffmpegProfile {
        case 1: "mp4a.40.2"  // LC
        case 4: "mp4a.40.5"  // HE-AAC (SBR)
        case 28: "mp4a.40.29"  // HE-AAC v2 (PS)
        case 0: "mp4a.40.1"  // Main
        case 22: "mp4a.40.23"  // LD
        case 38: "mp4a.40.39"  // ELD
        default: ffmpegProfile >= 0 ? "mp4a.40.\(ffmpegProfile + 1)" : "mp4a.40.2"
        }
    }

    /// Strings for codecs whose name is the whole string.
    public static func simple(codec: String) -> String? {
        switch codec {
        case "ac3": "ac-3"
        case "eac3": "ec-3"
        case "opus": "opus"
        case "flac": "flac"
        case "vorbis": "vorbis"
        case "mp3": "mp4a.40.34"
        case "vp8": "vp8"
        default: nil
        }
    }

    static func reversedBits(_ value: UInt32) -> UInt32 {
        var input = value
        var output: UInt32 = 0
        for _ in 0..<32 {
            output = output << 1 | (input & 1)
            input >>= 1
        }
        return output
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }

    static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }
}
