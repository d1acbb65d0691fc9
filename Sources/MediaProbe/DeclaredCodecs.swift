import CastModel

/// What a `contentType`'s `codecs` parameter says about the streams, in the form
/// ``DeviceJudge`` judges: a receiver asks its media stack about those codecs
/// (`canDisplayType`) before it fetches anything, so a declared codec the device cannot decode
/// fails the load at once.
///
/// Only the fields an RFC 6381 string carries are filled (codec, profile, level, bit depth);
/// strings it does not recognise are left out rather than guessed.
///
/// ```swift
/// DeclaredCodecs.streams(in: #"video/mp4; codecs="avc1.6E0028, mp4a.40.2""#).map(\.profile)
/// // ["High 10", "LC"]
/// ```
public enum DeclaredCodecs {
    /// The streams the `codecs` parameter of `contentType` declares; empty when there is none.
    public static func streams(in contentType: String) -> [StreamInfo] {
        guard case .success(let type) = MediaType.parse(contentType) else { return [] }
        return type.codecs.prefix(16).enumerated().compactMap { index, codec in stream(from: codec, index: index) }
    }

    /// The verdict of `device` on the declared codecs alone: container and fast-start findings
    /// are left out, since the codecs say nothing about them.
    public static func verdict(for contentType: String, source: String, on device: DeviceProfile) -> DeviceVerdict? {
        let streams = streams(in: contentType)
        guard !streams.isEmpty else { return nil }
        let probe = ProbeResult(
            source: source, formatName: "declared", container: "declared", contentType: contentType, duration: nil,
            bitRate: nil,
            isFastStart: nil, streams: streams)
        var verdict = DeviceJudge().verdict(for: probe, on: device)
        verdict.reasons.removeAll { $0.code == "device.container" || $0.code == "device.no-media" }
        verdict.outcome =
            verdict.reasons.contains { $0.severity == .error }
            ? .willNotPlay : verdict.reasons.contains { $0.severity == .warning } ? .playsWithCaveats : .plays
        return verdict
    }

    /// One stream from one RFC 6381 string, or nil when the string is not understood.
    static func stream(from codec: String, index: Int) -> StreamInfo? {
        let parts = codec.trimmingSpaces().split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard let tag = parts.first?.lowercased() else { return nil }
        switch tag {
        case "avc1", "avc3":
            // avc1.PPCCLL: profile_idc, constraint flags, level_idc, in hex.
            guard parts.count >= 2, parts[1].count == 6, let value = UInt32(parts[1], radix: 16) else { return nil }
            let profile = Int(value >> 16)
            let constraints = Int((value >> 8) & 0xFF)
            var stream = StreamInfo(index: index, kind: .video, codec: "h264")
            stream.level = Int(value & 0xFF)
            stream.codecString = codec
            switch profile {
            case 66: stream.profile = constraints & 0x40 != 0 ? "Constrained Baseline" : "Baseline"
            case 77: stream.profile = "Main"
            case 88: stream.profile = "Extended"
            case 100: stream.profile = "High"
            case 110:
                stream.profile = "High 10"
                stream.bitDepth = 10
            case 122:
                stream.profile = "High 4:2:2"
                stream.bitDepth = 10
                stream.chroma = "4:2:2"
            case 244:
                stream.profile = "High 4:4:4 Predictive"
                stream.bitDepth = 10
                stream.chroma = "4:4:4"
            default: stream.profile = "profile \(profile)"
            }
            return stream
        case "hvc1", "hev1":
            // hvc1.[A-C]P.C.TL…: the profile idc after an optional space letter, then tier and level.
            guard parts.count >= 4 else { return nil }
            let profileText = parts[1].drop { $0.isLetter }
            guard let profile = Int(profileText), let level = Int(parts[3].dropFirst()) else { return nil }
            var stream = StreamInfo(index: index, kind: .video, codec: "hevc")
            stream.codecString = codec
            stream.level = level
            stream.profile =
                switch profile {
                case 1: "Main"
                case 2: "Main 10"
                case 3: "Main Still Picture"
                case 4: "Rext"
                default: "profile \(profile)"
                }
            if profile == 2 { stream.bitDepth = 10 }
            return stream
        case "vp09":
            // vp09.PP.LL.DD: profile, level ×10, bit depth.
            guard parts.count >= 4, let profile = Int(parts[1]), let level = Int(parts[2]), let depth = Int(parts[3])
            else { return nil }
            var stream = StreamInfo(index: index, kind: .video, codec: "vp9")
            stream.codecString = codec
            stream.profile = "Profile \(profile)"
            stream.level = level
            stream.bitDepth = depth
            return stream
        case "vp9":
            return StreamInfo(index: index, kind: .video, codec: "vp9")
        case "vp8":
            return StreamInfo(index: index, kind: .video, codec: "vp8")
        case "av01":
            // av01.P.LLT.DD: profile (0 Main, 1 High, 2 Professional), seq_level_idx and tier, bit depth.
            guard parts.count >= 4, let profile = Int(parts[1]), let level = Int(parts[2].prefix(2)),
                let depth = Int(parts[3])
            else {
                return nil
            }
            var stream = StreamInfo(index: index, kind: .video, codec: "av1")
            stream.codecString = codec
            stream.profile =
                ["Main", "High", "Professional"].indices.contains(profile)
                ? ["Main", "High", "Professional"][profile] : "profile \(profile)"
            stream.level = level
            stream.bitDepth = depth
            return stream
        case "mp4a":
            guard parts.count >= 2 else { return nil }
            let object = parts[1].lowercased()
            let name: String? =
                switch object {
                case "40": "aac"
                case "69", "6b": "mp3"
                case "a5": "ac3"
                case "a6": "eac3"
                default: nil
                }
            guard var name else { return nil }
            if object == "40", parts.count >= 3, parts[2] == "34" { name = "mp3" }
            var stream = StreamInfo(index: index, kind: .audio, codec: name)
            stream.codecString = codec
            if name == "aac", parts.count >= 3 {
                stream.profile = ["2": "LC", "5": "HE-AAC", "29": "HE-AACv2"][parts[2]]
            }
            return stream
        case "ac-3":
            return StreamInfo(index: index, kind: .audio, codec: "ac3")
        case "ec-3":
            return StreamInfo(index: index, kind: .audio, codec: "eac3")
        case "opus", "flac", "vorbis", "mp3":
            return StreamInfo(index: index, kind: .audio, codec: tag)
        default:
            return nil
        }
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
