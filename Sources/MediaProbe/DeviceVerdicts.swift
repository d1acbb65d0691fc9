public import CastModel
import StreamingFormats

/// Whether one device can play one probed file, and why not.
public struct DeviceVerdict: Sendable, Hashable {
    /// The overall answer.
    public enum Outcome: String, Sendable, Hashable, Codable, Comparable {
        case plays
        case playsWithCaveats = "plays-with-caveats"
        case willNotPlay = "will-not-play"

        private var rank: Int {
            switch self {
            case .plays: 0
            case .playsWithCaveats: 1
            case .willNotPlay: 2
            }
        }

        public static func < (lhs: Outcome, rhs: Outcome) -> Bool { lhs.rank < rhs.rank }
    }

    public var device: DeviceProfile
    public var outcome: Outcome
    /// Every reason, each a diagnostic with a stable code; warnings are caveats, errors block.
    public var reasons: [Diagnostic]
    /// The smallest ffmpeg command that fixes every blocking reason (and the caveats it can),
    /// re-encoding only the streams that need it; nil when nothing needs fixing.
    public var fix: String?
    /// The same fix as an argument vector (`ffmpeg`, `-i`, input, …, output), unquoted, so a
    /// tool can run it with its own output path in place of the last element; nil when there
    /// is nothing to fix or the fix is not one file (HLS repackaging).
    public var fixArguments: [String]?
}

/// Judges probe results against ``DeviceProfile``s.
public struct DeviceJudge: Sendable {
    /// Creates a judge.
    public init() {}

    /// Verdicts for every profile.
    public func verdicts(for probe: ProbeResult, devices: [DeviceProfile] = DeviceProfile.all) -> [DeviceVerdict] {
        // Most profiles need the same fix: each distinct one is written once.
        var fixes: [FixPlan: FixText] = [:]
        return devices.map { verdict(for: probe, on: $0, fixes: &fixes) }
    }

    /// The verdict for one profile.
    public func verdict(for probe: ProbeResult, on device: DeviceProfile) -> DeviceVerdict {
        var fixes: [FixPlan: FixText] = [:]
        return verdict(for: probe, on: device, fixes: &fixes)
    }

    /// A fix as a shell command and as arguments, for one probe.
    struct FixText {
        var command: String
        var arguments: [String]?
    }

    /// The verdict for one profile; `fixes` keeps the text of each plan already written for
    /// the same probe.
    func verdict(for probe: ProbeResult, on device: DeviceProfile, fixes: inout [FixPlan: FixText]) -> DeviceVerdict {
        var reasons: [Diagnostic] = []
        var plan = FixPlan()
        let location = Diagnostic.SourceLocation(file: probe.source)
        func add(_ severity: Diagnostic.Severity, _ code: DiagnosticCode, _ message: String) {
            reasons.append(Diagnostic(severity, code, message, location: location))
        }

        // Container.
        switch probe.container {
        case "matroska", "mov":
            add(
                .error, "device.container",
                "\(probe.container == "mov" ? "QuickTime (MOV)" : "Matroska (MKV)") is not a container Cast plays")
            plan.remuxToMP4 = true
        case "mp4", "webm", "mpegts", "mp3", "flac", "ogg", "wav", "aac", "hls", "dash":
            break
        default:
            if !probe.streams.contains(where: { $0.kind == .video || $0.kind == .audio }) {
                add(.error, "device.no-media", "the file has no audio or video stream")
            } else {
                add(.error, "device.container", "\(probe.container) is not a container Cast plays")
                plan.remuxToMP4 = true
            }
        }
        // A master lists its codecs; a media playlist has only the streams FFmpeg found.
        if let hls = probe.hls, hls.videoPackaging == .ts,
            hls.codecs.contains(where: { $0.hasPrefix("hvc1") || $0.hasPrefix("hev1") || $0.hasPrefix("dvh") })
                || (hls.variants.isEmpty && probe.videoStreams.contains { $0.codec == "hevc" })
        {
            add(
                .error, "device.hevc-in-ts",
                "HEVC in MPEG-TS HLS segments does not play on Cast: HLS TS carries H.264 only; HEVC needs fMP4 segments"
            )
            plan.hlsFMP4 = true
        }
        if probe.isFastStart == false {
            add(
                .warning, "device.not-fast-start",
                "the MP4 index (moov) is at the end: playback starts only after an extra range request to the end of the file, and fails on servers without Range support"
            )
            plan.fastStart = true
        }

        // Video.
        let videos = probe.videoStreams
        if !device.hasVideo, !videos.isEmpty {
            add(.warning, "device.audio-only", "the device has no screen: only the audio plays")
        }
        if device.hasVideo {
            for stream in videos {
                checkVideo(stream, device: device, plan: &plan, add: add)
            }
        }

        // Audio.
        for stream in probe.audioStreams {
            switch stream.codec {
            case "aac":
                if let channels = stream.channels, channels > 2 {
                    let layout = stream.channelLayout ?? "\(channels)-channel"
                    if device.droppedMultichannelAAC {
                        add(
                            .error, "device.aac-multichannel",
                            "\(layout) AAC does not play: multichannel AAC was removed from this device in firmware 1.28 (Google issue tracker 69088762)"
                        )
                    } else if !device.hasHDMI {
                        add(
                            .error, "device.aac-multichannel",
                            "\(layout) AAC does not play: the device has no surround output, and Cast decodes multichannel AAC only for an HDMI sink that takes multichannel PCM"
                        )
                    } else {
                        add(
                            .warning, "device.aac-multichannel",
                            "\(stream.channelLayout ?? "\(channels)-channel") AAC plays only when the TV or receiver accepts multichannel PCM over HDMI"
                        )
                    }
                    plan.audio = .stereoAAC(index: stream.index)
                }
            case "mp3", "opus", "vorbis", "flac":
                break
            case "pcm_s16le", "pcm_s24le", "pcm_u8", "pcm_s16be":
                if probe.container != "wav" {
                    add(.warning, "device.pcm-in-container", "PCM audio outside WAV is not reliably played")
                    plan.audio = .stereoAAC(index: stream.index)
                }
            case "ac3", "eac3":
                let name = stream.codec == "ac3" ? "AC-3" : "E-AC-3"
                if device.hasHDMI {
                    add(
                        .warning, "device.audio-passthrough",
                        "\(name) is passed through to the TV undecoded: silent unless the TV or receiver decodes \(name)"
                    )
                } else {
                    add(
                        .error, "device.audio-passthrough",
                        "\(name) needs an HDMI sink that decodes it; \(device.name) has none")
                }
                plan.audio = .stereoAAC(index: stream.index)
            default:
                add(.error, "device.audio-codec", "\(stream.codec) audio is not decoded by Cast devices")
                plan.audio = .stereoAAC(index: stream.index)
            }
        }
        if videos.isEmpty, probe.audioStreams.isEmpty, probe.container != "hls", probe.container != "dash" {
            add(.error, "device.no-media", "the file has no audio or video stream")
        }

        // Embedded subtitles.
        for stream in probe.subtitleStreams {
            if stream.isTextSubtitle == false {
                add(
                    .warning, "device.bitmap-subtitles",
                    "subtitle stream #\(stream.index) (\(stream.codec)) is bitmaps: Cast shows only WebVTT/TTML text tracks, and OCR would be needed"
                )
            } else {
                add(
                    .warning, "device.embedded-subtitles",
                    "subtitle stream #\(stream.index) (\(stream.codec)\(stream.language.map { ", \($0)" } ?? "")) is embedded: the receiver ignores it; convert it to a WebVTT sidecar with castprep captions convert \(Self.quoted(probe.source)) --stream \(stream.index)"
                )
            }
        }

        let outcome: DeviceVerdict.Outcome =
            reasons.contains { $0.severity == .error }
            ? .willNotPlay : reasons.contains { $0.severity == .warning } ? .playsWithCaveats : .plays
        plan.audioCodecs = probe.audioStreams.map(\.codec)
        plan.hlsMaster = !(probe.hls?.variants.isEmpty ?? true)
        var text: FixText?
        if !plan.isEmpty {
            if let known = fixes[plan] {
                text = known
            } else {
                let made = FixText(
                    command: plan.command(input: probe.source, container: probe.container),
                    arguments: plan.arguments(input: probe.source, container: probe.container))
                fixes[plan] = made
                text = made
            }
        }
        let fix = text?.command
        for index in reasons.indices where reasons[index].fix == nil && reasons[index].severity != .note {
            if reasons[index].code == "device.embedded-subtitles" || reasons[index].code == "device.bitmap-subtitles"
                || reasons[index].code == "device.audio-only"
            {
                continue
            }
            reasons[index].fix = fix
        }
        return DeviceVerdict(
            device: device, outcome: outcome, reasons: reasons, fix: fix, fixArguments: text?.arguments)
    }

    func checkVideo(
        _ stream: StreamInfo, device: DeviceProfile, plan: inout FixPlan,
        add: (Diagnostic.Severity, DiagnosticCode, String) -> Void
    ) {
        let codecName =
            ["h264": "H.264", "hevc": "HEVC", "vp8": "VP8", "vp9": "VP9", "av1": "AV1"][stream.codec] ?? stream.codec
        guard let limit = device.video.first(where: { $0.codec == stream.codec }) else {
            add(.error, "device.video-codec", "\(device.name) does not decode \(codecName) video")
            plan.video = .h264(index: stream.index, maxHeight: Self.fitHeight(stream, device: device))
            return
        }
        var reencode = false
        if let depth = stream.bitDepth, depth > 8, stream.codec == "h264" {
            add(
                .error, "device.h264-high10",
                "\(depth)-bit H.264 (\(stream.profile ?? "High 10")) is not decoded by any Cast device: Cast supports H.264 High profile, 8-bit"
            )
            reencode = true
        } else if let chroma = stream.chroma, chroma != "4:2:0" {
            add(.error, "device.chroma", "\(chroma) chroma is not decoded by Cast devices; they need 4:2:0")
            reencode = true
        } else if let profile = stream.profile, !limit.profiles.isEmpty, !limit.profiles.contains(profile) {
            add(
                .error, "device.video-profile",
                "\(codecName) \(profile) is not supported on \(device.name) (supported: \(limit.profiles.joined(separator: ", ")))"
            )
            reencode = true
        }
        if let level = stream.level, let maxLevel = limit.maxLevel, level > maxLevel {
            add(
                .error, "device.video-level",
                "\(codecName) level \(Self.levelName(level, codec: stream.codec)) is above \(device.name)'s limit of \(Self.levelName(maxLevel, codec: stream.codec))"
            )
            reencode = true
        }
        let width = stream.width ?? 0
        let height = stream.height ?? 0
        // Compare the long and short sides so portrait video is judged fairly.
        if max(width, height) > max(limit.maxWidth, limit.maxHeight)
            || min(width, height) > min(limit.maxWidth, limit.maxHeight)
        {
            add(
                .error, "device.resolution",
                "\(width)×\(height) is larger than \(device.name) decodes (\(limit.maxWidth)×\(limit.maxHeight))")
            reencode = true
        }
        if let rate = stream.frameRate, rate > limit.maxFrameRate + 0.01 {
            add(
                .error, "device.frame-rate",
                "\(Self.trimmed(rate)) fps is above \(device.name)'s \(Self.trimmed(limit.maxFrameRate)) fps at this size"
            )
            reencode = true
        }
        if let transfer = stream.hdrTransfer, !device.hdr.contains(transfer) {
            add(
                .warning, "device.hdr",
                "\(transfer == "PQ" ? "HDR10/PQ" : "HLG") video on a device without HDR output: colours will look washed out (no tone mapping)"
            )
        }
        if stream.dolbyVisionProfile != nil, !device.dolbyVision {
            add(
                .warning, "device.dolby-vision",
                "Dolby Vision is not supported on \(device.name): only a compatible base layer, if any, plays")
        }
        if reencode {
            plan.video =
                stream.codec == "h264" || !limit.profiles.isEmpty
                ? .h264(index: stream.index, maxHeight: Self.fitHeight(stream, device: device))
                : .h264(index: stream.index, maxHeight: nil)
        }
    }

    /// The height to scale to when the picture is too large for the device, else nil.
    static func fitHeight(_ stream: StreamInfo, device: DeviceProfile) -> Int? {
        let h264 = device.video.first { $0.codec == "h264" }
        guard let limit = h264, let height = stream.height, let width = stream.width else { return nil }
        if width > limit.maxWidth || height > limit.maxHeight { return min(limit.maxHeight, height) }
        return nil
    }

    static func levelName(_ level: Int, codec: String) -> String {
        switch codec {
        case "hevc": trimmed(Double(level) / 30)
        case "av1": "\(level / 4 + 2).\(level % 4)"
        default: trimmed(Double(level) / 10)
        }
    }

    static func trimmed(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String((value * 100).rounded() / 100)
    }

    static func quoted(_ path: String) -> String {
        path.allSatisfy({ $0.isLetter || $0.isNumber || "/._-".contains($0) })
            ? path : "'" + path.replacingApostrophes() + "'"
    }
}

/// What an ffmpeg fix must change; everything else is copied.
///
/// A fix that changes a codec always writes MP4 (H.264/AAC, `+faststart`): WebM, Ogg and
/// other containers refuse H.264 or AAC, so keeping the input's container would make a
/// command ffmpeg rejects.
struct FixPlan: Hashable {
    enum VideoChange: Hashable { case h264(index: Int, maxHeight: Int?) }
    enum AudioChange: Hashable { case stereoAAC(index: Int) }

    var video: VideoChange?
    var audio: AudioChange?
    var remuxToMP4 = false
    var fastStart = false
    /// HLS that must be repackaged with fMP4 segments.
    var hlsFMP4 = false
    /// Whether the HLS source is a master playlist (variants), which one command cannot repackage.
    var hlsMaster = false
    /// The codecs of the input's audio streams, to know which ones MP4 takes as they are.
    var audioCodecs: [String] = []

    var isEmpty: Bool { video == nil && audio == nil && !remuxToMP4 && !fastStart && !hlsFMP4 }

    /// Audio codecs that go into MP4 unchanged and play on Cast.
    static let mp4Audio: Set<String> = ["aac", "mp3"]

    /// `ffmpeg -i IN -map … -c copy -c:v libx264 … OUT.mp4`, quoted for a POSIX shell.
    func command(input: String, container: String) -> String {
        if hlsFMP4, hlsMaster {
            return
                "repackage every variant playlist with fMP4 segments (castprep probe VARIANT.m3u8 prints the ffmpeg command for one), "
                + "then point the master playlist at the new playlists"
        }
        guard var arguments = arguments(input: input, container: container) else { return "" }
        // Only the paths can hold characters the shell cares about; the options are fixed text.
        for index in arguments.indices
        where index > 0
            && (arguments[index - 1] == "-i" || index == arguments.count - 1
                || arguments[index - 1] == "-hls_segment_filename" || arguments[index - 1] == "-hls_fmp4_init_filename"
                || arguments[index].contains("?"))
        {
            arguments[index] = DeviceJudge.quoted(arguments[index])
        }
        return arguments.joined(separator: " ")
    }

    /// The command's arguments, unquoted; the output (`IN.cast.mp4` beside a local input, in
    /// the current folder for a URL) is last. Nil for HLS with variants.
    func arguments(input: String, container: String) -> [String]? {
        let base = input.split(separator: "/").last.map(String.init) ?? input
        // A URL's folder cannot be written to: its fix writes into the current folder.
        let directory = input.contains("/") && !input.contains("://") ? String(input.dropLast(base.count)) : ""
        let name = base.split(separator: "?").first.map(String.init) ?? base
        let stem =
            name.split(separator: ".").count > 1 ? name.split(separator: ".").dropLast().joined(separator: ".") : name
        var arguments = ["ffmpeg", "-i", input]
        if hlsFMP4 {
            guard !hlsMaster else { return nil }
            // TS carries ADTS AAC; fMP4 needs it as AudioSpecificConfig, which the hls muxer does
            // not convert by itself (the mp4 muxer does).
            arguments += ["-map", "0:v?", "-map", "0:a?", "-c", "copy", "-tag:v", "hvc1"]
            if audioCodecs.contains("aac") { arguments += ["-bsf:a", "aac_adtstoasc"] }
            let output = directory + stem + ".fmp4"
            arguments += [
                "-f", "hls", "-hls_segment_type", "fmp4", "-hls_playlist_type", "vod",
                // Relative to the playlist's folder.
                "-hls_fmp4_init_filename", stem + ".fmp4-init.mp4",
                "-hls_segment_filename", output + "-%d.m4s", output + ".m3u8",
            ]
            return arguments
        }
        let changesCodec = video != nil || audio != nil
        let inputIsMP4 = ["mp4", "mov"].contains(container) && !remuxToMP4
        let outputIsMP4 = remuxToMP4 || changesCodec || inputIsMP4 || container == "matroska"
        // Subtitle, data and attachment streams of other containers cannot be copied into MP4,
        // so a change of container keeps only audio and video.
        if outputIsMP4 && !inputIsMP4 {
            arguments += ["-map", "0:v?", "-map", "0:a?"]
        } else {
            arguments += ["-map", "0"]
        }
        arguments += ["-c", "copy"]
        if case .h264(_, let maxHeight) = video {
            arguments += [
                "-c:v", "libx264", "-profile:v", "high", "-pix_fmt", "yuv420p", "-crf", "20", "-preset", "medium",
            ]
            if let maxHeight { arguments += ["-vf", "scale=-2:\(maxHeight)"] }
        }
        let audioNeedsAAC = outputIsMP4 && !inputIsMP4 && audioCodecs.contains { !Self.mp4Audio.contains($0) }
        if audio != nil || audioNeedsAAC {
            arguments += ["-c:a", "aac", "-ac", "2", "-b:a", "192k"]
        }
        if outputIsMP4 { arguments += ["-movflags", "+faststart"] }
        let ext =
            outputIsMP4
            ? "mp4"
            : (name.split(separator: ".").count > 1 ? name.split(separator: ".").last.map(String.init) ?? "mp4" : "mp4")
        arguments.append(directory + stem + ".cast." + ext)
        return arguments
    }
}

extension String {
    fileprivate func replacingApostrophes() -> String {
        var result = ""
        for character in self { result += character == "'" ? "'\\''" : String(character) }
        return result
    }
}
