internal import CFFmpeg
internal import CastModel

/// A subtitle stream found inside a media container.
public struct EmbeddedSubtitleStream: Sendable, Hashable, Codable {
    /// The container's stream index, as `ffprobe` numbers it and `--stream N` takes it.
    public var index: Int
    /// FFmpeg's codec name: `mov_text`, `subrip`, `ass`, `webvtt`, `hdmv_pgs_subtitle`, …
    public var codecName: String
    /// The stream's `language` tag, if any.
    public var language: String?
    /// The stream's `title` tag, if any.
    public var title: String?
    /// Whether the stream carries text (convertible) rather than bitmaps (needs OCR).
    public var isText: Bool

    /// Creates a stream description.
    public init(index: Int, codecName: String, language: String? = nil, title: String? = nil, isText: Bool) {
        self.index = index
        self.codecName = codecName
        self.language = language
        self.title = title
        self.isText = isText
    }
}

/// Extracts text subtitle streams (mov_text, subrip, ass/ssa, webvtt) from MP4, MKV, TS
/// and other containers with libavformat and libavcodec.
///
/// Every decoder FFmpeg has for text subtitles produces ASS dialogue events, so each event
/// goes through the same override-tag mapping as an `.ass` file, with the track's own
/// styles when the container has them (Matroska ASS tracks). Bitmap streams (PGS, VobSub,
/// DVB) fail with `captions.bitmap-stream`: WebVTT needs text and OCR is out of scope.
///
/// The synchronous functions block on file I/O and decoding; the `async` one runs them on
/// a dedicated thread so Swift's cooperative pool is never blocked.
public enum EmbeddedSubtitleExtractor {
    private static let bitmapCodecs: Set<AVCodecID> = [
        AV_CODEC_ID_HDMV_PGS_SUBTITLE, AV_CODEC_ID_DVD_SUBTITLE, AV_CODEC_ID_DVB_SUBTITLE, AV_CODEC_ID_XSUB,
        AV_CODEC_ID_DVB_TELETEXT, AV_CODEC_ID_HDMV_TEXT_SUBTITLE,
    ]

    /// Lists the subtitle streams of the media file at `path` (blocking).
    public static func subtitleStreams(path: String) throws(CaptionError) -> [EmbeddedSubtitleStream] {
        let input = try Input(path: path)
        return input.subtitleStreams()
    }

    /// Reads one text subtitle stream (blocking): `stream` is the container's stream index,
    /// or nil for the first text subtitle stream.
    ///
    /// - Throws: ``CaptionError`` `captions.media-open-failed`, `captions.no-subtitle-streams`,
    ///   `captions.stream-not-subtitle`, `captions.bitmap-stream`, `captions.decoder-failed`.
    public static func extractBlocking(path: String, stream: Int? = nil, options: CaptionReadOptions)
        throws(CaptionError) -> CaptionReadResult
    {
        let input = try Input(path: path)
        let streams = input.subtitleStreams()
        let listing = streams.map { "#\($0.index) \($0.codecName)\($0.language.map { " (\($0))" } ?? "")" }
            .joined(separator: ", ")
        let chosen: EmbeddedSubtitleStream
        if let stream {
            guard let match = streams.first(where: { $0.index == stream }) else {
                throw CaptionError(
                    "captions.stream-not-subtitle",
                    "stream #\(stream) of \(path) is not a subtitle stream"
                        + (streams.isEmpty ? "; the file has none" : "; subtitle streams: \(listing)"),
                    fix: streams.first.map { "pass --stream \($0.index)" } ?? "use a file with a subtitle track",
                    location: Diagnostic.SourceLocation(file: path))
            }
            chosen = match
        } else {
            guard let first = streams.first(where: \.isText) ?? streams.first else {
                throw CaptionError(
                    "captions.no-subtitle-streams", "\(path) has no subtitle streams",
                    fix: "use a sidecar caption file instead", location: Diagnostic.SourceLocation(file: path))
            }
            chosen = first
        }
        guard chosen.isText else {
            throw CaptionError(
                "captions.bitmap-stream",
                "stream #\(chosen.index) of \(path) is \(chosen.codecName), a bitmap (picture) subtitle format; WebVTT needs text, and OCR is not supported",
                fix: streams.contains(where: \.isText)
                    ? "pick a text stream instead: \(streams.filter(\.isText).map { "--stream \($0.index)" }.joined(separator: " or "))"
                    : "burn the subtitles into the video, or OCR them with a separate tool (e.g. Subtitle Edit) to SRT first",
                location: Diagnostic.SourceLocation(file: path))
        }
        return try input.decode(stream: chosen, options: options)
    }

    /// Owns an opened `AVFormatContext`.
    private final class Input {
        private var context: UnsafeMutablePointer<AVFormatContext>?
        let path: String

        init(path: String) throws(CaptionError) {
            self.path = path
            try FFmpegLibrary.requireLoaded(path: path)
            _ = quietFFmpegLogging
            var opened: UnsafeMutablePointer<AVFormatContext>?
            let status = castprep_avformat_open_input(&opened, path, nil, nil)
            guard status >= 0, let opened else {
                throw CaptionError(
                    "captions.media-open-failed", "avformat_open_input failed for \(path): \(errorText(status))",
                    fix: "check that the file exists and is a media container FFmpeg can read",
                    location: Diagnostic.SourceLocation(file: path))
            }
            context = opened
            let found = castprep_avformat_find_stream_info(opened, nil)
            guard found >= 0 else {
                throw CaptionError(
                    "captions.media-open-failed", "avformat_find_stream_info failed for \(path): \(errorText(found))",
                    location: Diagnostic.SourceLocation(file: path))
            }
        }

        deinit { castprep_avformat_close_input(&context) }

        private func stream(_ index: Int) -> UnsafeMutablePointer<AVStream>? {
            guard let context, index >= 0, index < Int(context.pointee.nb_streams) else { return nil }
            return context.pointee.streams[index]
        }

        func subtitleStreams() -> [EmbeddedSubtitleStream] {
            guard let context else { return [] }
            var result: [EmbeddedSubtitleStream] = []
            for index in 0..<Int(context.pointee.nb_streams) {
                guard let stream = stream(index), let parameters = stream.pointee.codecpar,
                    parameters.pointee.codec_type == AVMEDIA_TYPE_SUBTITLE
                else { continue }
                let codec = parameters.pointee.codec_id
                let name = castprep_avcodec_get_name(codec).map { String(cString: $0) } ?? "unknown"
                result.append(
                    EmbeddedSubtitleStream(
                        index: index, codecName: name, language: Self.tag(stream, "language"),
                        title: Self.tag(stream, "title"),
                        isText: !EmbeddedSubtitleExtractor.bitmapCodecs.contains(codec)))
            }
            return result
        }

        private static func tag(_ stream: UnsafeMutablePointer<AVStream>, _ key: String) -> String? {
            guard let entry = castprep_av_dict_get(stream.pointee.metadata, key, nil, 0),
                let value = entry.pointee.value
            else {
                return nil
            }
            return String(cString: value)
        }

        func decode(stream info: EmbeddedSubtitleStream, options: CaptionReadOptions) throws(CaptionError)
            -> CaptionReadResult
        {
            guard let context, let stream = stream(info.index), let parameters = stream.pointee.codecpar else {
                throw CaptionError("captions.decoder-failed", "stream #\(info.index) disappeared from \(path)")
            }
            guard let decoder = castprep_avcodec_find_decoder(parameters.pointee.codec_id) else {
                throw CaptionError(
                    "captions.decoder-failed",
                    "this FFmpeg build has no decoder for \(info.codecName) (stream #\(info.index))",
                    fix: "install an FFmpeg build with the \(info.codecName) decoder",
                    location: Diagnostic.SourceLocation(file: path))
            }
            var codecContext = castprep_avcodec_alloc_context3(decoder)
            defer { castprep_avcodec_free_context(&codecContext) }
            guard let codecContext else {
                throw CaptionError("captions.decoder-failed", "avcodec_alloc_context3 failed for \(info.codecName)")
            }
            let copied = castprep_avcodec_parameters_to_context(codecContext, parameters)
            guard copied >= 0 else {
                throw CaptionError(
                    "captions.decoder-failed", "avcodec_parameters_to_context failed: \(errorText(copied))")
            }
            codecContext.pointee.pkt_timebase = stream.pointee.time_base
            let opened = castprep_avcodec_open2(codecContext, decoder, nil)
            guard opened >= 0 else {
                throw CaptionError(
                    "captions.decoder-failed", "avcodec_open2 failed for \(info.codecName): \(errorText(opened))",
                    location: Diagnostic.SourceLocation(file: path))
            }
            var script = ASSScript()
            if let header = codecContext.pointee.subtitle_header, codecContext.pointee.subtitle_header_size > 0 {
                let text = String(
                    decoding: UnsafeBufferPointer(start: header, count: Int(codecContext.pointee.subtitle_header_size)),
                    as: UTF8.self)
                var section = ""
                for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }) {
                    let trimmed = line.trimmingASCIIWhitespace()
                    if trimmed.hasPrefix("[") {
                        section = trimmed.lowercased()
                    } else {
                        script.readHeaderLine(trimmed, section: section)
                    }
                }
            }
            var log = DiagnosticLog(file: path)
            var document = CaptionDocument()
            var packet = castprep_av_packet_alloc()
            defer { castprep_av_packet_free(&packet) }
            guard let packet else { throw CaptionError("captions.decoder-failed", "av_packet_alloc failed") }
            let timeBase = stream.pointee.time_base
            let seconds = { (value: Int64) -> Double in
                Double(value) * Double(timeBase.num) / Double(max(1, timeBase.den))
            }
            var decodeErrors = 0
            while castprep_av_read_frame(context, packet) >= 0 {
                defer { castprep_av_packet_unref(packet) }
                guard Int(packet.pointee.stream_index) == info.index else { continue }
                var subtitle = AVSubtitle()
                var gotSubtitle: Int32 = 0
                let status = castprep_avcodec_decode_subtitle2(codecContext, &subtitle, &gotSubtitle, packet)
                guard status >= 0 else {
                    decodeErrors += 1
                    if decodeErrors <= 20 {
                        log.add(
                            .warning, "captions.decoder-error",
                            "stream #\(info.index): a \(info.codecName) packet could not be decoded (\(errorText(status))); skipped"
                        )
                    }
                    continue
                }
                guard gotSubtitle != 0 else { continue }
                defer { castprep_avsubtitle_free(&subtitle) }
                let pts = packet.pointee.pts != castprep_AV_NOPTS_VALUE ? packet.pointee.pts : packet.pointee.dts
                guard pts != castprep_AV_NOPTS_VALUE else {
                    log.add(
                        .warning, "captions.decoder-error",
                        "stream #\(info.index): a subtitle packet has no timestamp; skipped")
                    continue
                }
                let startSeconds = seconds(pts) + Double(subtitle.start_display_time) / 1000
                var endSeconds = seconds(pts) + seconds(packet.pointee.duration)
                if packet.pointee.duration <= 0 { endSeconds = seconds(pts) + Double(subtitle.end_display_time) / 1000 }
                guard let start = CaptionTime(seconds: startSeconds), let end = CaptionTime(seconds: endSeconds) else {
                    continue
                }
                for rectIndex in 0..<Int(subtitle.num_rects) {
                    guard let rect = subtitle.rects?[rectIndex] else { continue }
                    var dialogue: (style: String, effect: String, text: String)?
                    if rect.pointee.type == SUBTITLE_ASS, let ass = rect.pointee.ass {
                        dialogue = Self.dialogue(String(cString: ass))
                    } else if rect.pointee.type == SUBTITLE_TEXT, let text = rect.pointee.text {
                        dialogue = ("Default", "", String(cString: text).replacingNewlinesWithASSBreaks())
                    }
                    guard let dialogue else { continue }
                    let (cue, issues, classes) = script.cue(
                        text: dialogue.text, style: dialogue.style, effect: dialogue.effect, start: start, end: end,
                        line: nil)
                    for issue in issues {
                        log.add(
                            issue.severity, issue.code, "stream #\(info.index) at \(start): \(issue.message)",
                            fix: issue.fix)
                    }
                    document.classStyles.merge(classes) { current, _ in current }
                    guard document.cues.count < options.limits.maxCueCount else {
                        throw TextInput.tooManyCues(options, line: nil)
                    }
                    document.cues.append(cue)
                }
            }
            return CaptionReadResult(document: document, diagnostics: log.finished())
        }

        /// Splits FFmpeg's `ReadOrder,Layer,Style,Name,MarginL,MarginR,MarginV,Effect,Text`.
        static func dialogue(_ line: String) -> (style: String, effect: String, text: String) {
            var fields: [Substring] = []
            var remainder = Substring(line)
            while fields.count < 8, let comma = remainder.firstIndex(of: ",") {
                fields.append(remainder[..<comma])
                remainder = remainder[remainder.index(after: comma)...]
            }
            guard fields.count == 8 else { return ("Default", "", line) }
            return (String(fields[2]), String(fields[7]), String(remainder))
        }
    }

    fileprivate static func errorText(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard castprep_av_strerror(code, &buffer, buffer.count) == 0 else { return "error \(code)" }
        let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension String {
    fileprivate func replacingNewlinesWithASSBreaks() -> String {
        String(unicodeScalars.map { $0 == "\n" ? "\\N" : String($0) }.joined())
    }
}

/// FFmpeg prints decoder complaints to stderr by itself; CastPrep reports problems as
/// diagnostics instead, so FFmpeg's own log is silenced once (AV_LOG_QUIET).
private let quietFFmpegLogging: Void = { castprep_av_log_set_level(-8) }()
