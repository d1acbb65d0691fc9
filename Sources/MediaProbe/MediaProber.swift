internal import CFFmpeg
import CastModel
import Dispatch
import StreamingFormats
import SystemIO

/// Probes media files with libavformat: container, Cast content type with codecs, duration,
/// fast start, and every stream.
///
/// FFmpeg calls block, so ``probe(paths:width:)`` runs them on a dedicated Dispatch queue with
/// a bounded number in flight, never on Swift's cooperative pool. Hostile input is bounded:
/// FFmpeg reads at most ``Limits/probeBytes`` to find streams, and everything the probe of one
/// path reads (FFmpeg's opens and reads, the HLS playlists and DASH manifest read again here)
/// shares one deadline, ``Limits/timeout`` from the start, and one budget of
/// ``Limits/maximumRequests`` opened URLs: a server that trickles a byte a second or a master
/// playlist that lists itself ends in `probe.timeout` or `probe.too-many-requests`.
public struct MediaProber: Sendable {
    /// Bounds on the work one probe may do.
    public struct Limits: Sendable, Hashable {
        /// Bytes FFmpeg may read to identify streams (FFmpeg's default is 5 MB).
        public var probeBytes: Int
        /// Seconds after which a probe is abandoned, so a pathological file cannot hang a batch.
        public var timeout: Double
        /// URLs (and files) one probe may open: playlists, segments, redirects FFmpeg reopens.
        public var maximumRequests: Int

        /// Creates limits.
        public init(probeBytes: Int = 5_000_000, timeout: Double = 15, maximumRequests: Int = 200) {
            self.probeBytes = probeBytes
            self.timeout = timeout
            self.maximumRequests = maximumRequests
        }
    }

    public var limits: Limits
    /// Answers for small remote media by their bytes, shared by the probes of a run (see
    /// ``RemoteProbeMemo``); nil probes every URL with FFmpeg.
    public var remoteMemo: RemoteProbeMemo?

    /// Creates a prober.
    public init(limits: Limits = Limits(), remoteMemo: RemoteProbeMemo? = nil) {
        self.limits = limits
        self.remoteMemo = remoteMemo
    }

    private static let queue = DispatchQueue(
        label: "castprep.media-probe", qos: .userInitiated, attributes: .concurrent)

    /// FFmpeg's own logging is silenced once: errors are reported through ``ProbeError``.
    private static let quietLogging: Void = { castprep_av_log_set_level(-8) }()  // AV_LOG_QUIET

    /// Probes many files, at most `width` at a time, off the cooperative pool; results are in
    /// input order.
    public func probe(paths: [String], width: Int = 4) async -> [Result<ProbeResult, ProbeError>] {
        let width = max(1, width)
        var results = [Result<ProbeResult, ProbeError>?](repeating: nil, count: paths.count)
        await withTaskGroup(of: (Int, Result<ProbeResult, ProbeError>).self) { group in
            var next = 0
            func start() {
                guard next < paths.count else { return }
                let index = next
                let path = paths[index]
                next += 1
                group.addTask { (index, await self.probe(path: path)) }
            }
            for _ in 0..<min(width, paths.count) { start() }
            while let (index, result) = await group.next() {
                results[index] = result
                start()
            }
        }
        return results.map { $0 ?? .failure(ProbeError("probe.internal", "not probed", source: "")) }
    }

    /// Probes one file off the cooperative pool.
    public func probe(path: String) async -> Result<ProbeResult, ProbeError> {
        await withCheckedContinuation { continuation in
            Self.queue.async {
                continuation.resume(
                    returning: Result { () throws(ProbeError) -> ProbeResult in try self.probeBlocking(path: path) })
            }
        }
    }

    /// Probes a URL whose start was fetched before (`fetched`, see
    /// ``RemoteProbeMemo/FetchedKey``): a URL with the same key probed before in the run gives
    /// its answer without FFmpeg; otherwise FFmpeg probes it, without reading the body ahead
    /// again, and its answer is kept under the key. Without a ``remoteMemo`` or a key, this is
    /// ``probe(path:)``.
    public func probe(path: String, fetched: RemoteProbeMemo.FetchedKey?) async -> Result<ProbeResult, ProbeError> {
        guard let fetched, let memo = remoteMemo else { return await probe(path: path) }
        if var answer = memo.result(for: fetched) {
            answer.source = path
            return .success(answer)
        }
        return await withCheckedContinuation { continuation in
            Self.queue.async {
                continuation.resume(
                    returning: Result { () throws(ProbeError) -> ProbeResult in
                        try self.probeBlocking(path: path, fetched: fetched)
                    })
            }
        }
    }

    /// Probes one file on the calling thread (blocks).
    public func probeBlocking(path: String) throws(ProbeError) -> ProbeResult {
        try probeBlocking(path: path, fetched: nil)
    }

    private func probeBlocking(path: String, fetched: RemoteProbeMemo.FetchedKey?) throws(ProbeError) -> ProbeResult {
        try FFmpegLibrary.requireLoaded(source: path)
        let budget = ProbeBudget.make(timeout: limits.timeout, maximumRequests: limits.maximumRequests)
        defer { budget.deallocate() }
        _ = Self.quietLogging
        let isURL = path.hasPrefix("http://") || path.hasPrefix("https://")
        if !isURL {
            guard let status = try? FileSystem.status(of: path) else {
                throw ProbeError("probe.not-found", "no such file", fix: "check the path", source: path)
            }
            if status.kind == .directory {
                throw ProbeError(
                    "probe.is-directory", "this is a directory, not a media file", fix: "give a file path", source: path
                )
            }
            if status.size == 0 {
                throw ProbeError(
                    "probe.empty-file", "the file is empty (0 bytes)", fix: "re-export or re-download it", source: path)
            }
        }
        if path.lowercased().hasSuffix(".mpd") {
            // A manifest is not media: read it with libxml2 (FFmpeg's DASH demuxer is not in
            // every build, and it would fetch every segment).
            return try Self.probeDASH(path: path, budget: budget)
        }
        guard var context = castprep_avformat_alloc_context() else {
            throw ProbeError("probe.out-of-memory", "FFmpeg could not allocate a format context", source: path)
        }
        // Interrupt FFmpeg once the deadline passes or the request budget is spent: a crafted
        // file, a stalled or trickling server or a playlist listing itself must not hang the
        // batch. Every URL FFmpeg opens, nested demuxers' included, goes through io_open.
        budget.install(on: context)
        // A URL whose bytes this run has probed under another URL is answered from the memo
        // when FFmpeg opens it (io_open then ends the open with AVERROR_EXIT). A body fetched
        // before is not read again: its digest makes the key with what FFmpeg's open says.
        let lookup = isURL ? remoteMemo.map { RemoteProbeLookup(memo: $0, fetched: fetched) } : nil
        if let lookup { budget.state.pointee.lookup = Unmanaged.passUnretained(lookup).toOpaque() }
        defer { withExtendedLifetime(lookup) {} }
        var options: OpaquePointer?
        castprep_av_dict_set(&options, "probesize", String(limits.probeBytes), 0)
        castprep_av_dict_set(&options, "rw_timeout", String(Int(limits.timeout * 1_000_000)), 0)
        // HLS: without persistent connections every playlist and segment request is a new
        // io_open, so the budget sees each one.
        castprep_av_dict_set(&options, "http_persistent", "0", 0)
        var optionalContext: UnsafeMutablePointer<AVFormatContext>? = context
        let openStatus = castprep_avformat_open_input(&optionalContext, path, nil, &options)
        castprep_av_dict_free(&options)
        if openStatus < 0, var answer = lookup?.answer {
            if let fetched { remoteMemo?.store(answer, for: fetched) }
            answer.source = path
            return answer
        }
        guard openStatus >= 0, let opened = optionalContext else {
            throw budget.error(for: openStatus, stage: "open", path: path)
        }
        context = opened
        defer { castprep_avformat_close_input(&optionalContext) }
        let infoStatus = castprep_avformat_find_stream_info(context, nil)
        if infoStatus < 0 {
            throw budget.error(for: infoStatus, stage: "read", path: path)
        }
        let formatName = context.pointee.iformat.map { String(cString: $0.pointee.name) } ?? "unknown"
        var streams: [StreamInfo] = []
        var mediaDuration: Double?
        for index in 0..<Int(context.pointee.nb_streams) {
            guard let stream = context.pointee.streams[index] else { continue }
            let info = Self.describe(stream, index: index)
            streams.append(info)
            if info.kind == .video || info.kind == .audio, !info.isAttachedPicture {
                if stream.pointee.duration != castprep_AV_NOPTS_VALUE, stream.pointee.duration > 0 {
                    let seconds = Double(stream.pointee.duration) * Self.double(stream.pointee.time_base)
                    mediaDuration = max(mediaDuration ?? 0, seconds)
                } else if let entry = castprep_av_dict_get(stream.pointee.metadata, "DURATION", nil, 0),
                    let value = entry.pointee.value,
                    let seconds = Self.clockSeconds(String(cString: value))
                {
                    // Matroska stores per-stream durations as a DURATION tag ("00:00:02.000000000").
                    mediaDuration = max(mediaDuration ?? 0, seconds)
                }
            }
        }
        if mediaDuration == nil, context.pointee.duration != castprep_AV_NOPTS_VALUE, context.pointee.duration > 0 {
            let containerDuration = Double(context.pointee.duration) / 1_000_000  // AV_TIME_BASE
            // The container's duration covers subtitle streams too; when there are any, find
            // where the audio and video really end by reading the last packets.
            if streams.contains(where: { $0.kind == .subtitle }) {
                mediaDuration =
                    Self.lastMediaTimestamp(context, streams: streams, containerDuration: containerDuration)
                    ?? containerDuration
            } else {
                mediaDuration = containerDuration
            }
        }
        let bitRate = context.pointee.bit_rate > 0 ? Int(context.pointee.bit_rate) : nil
        let ext =
            path.split(separator: "/").last.flatMap { name in
                name.split(separator: ".").count > 1 ? name.split(separator: ".").last : nil
            }
            .map { $0.lowercased() } ?? ""
        let container = Self.container(formatName: formatName, fileExtension: ext, streams: streams)
        var fastStart: Bool?
        if container == "mp4" || container == "mov", !isURL {
            fastStart = Self.fastStart(path: path)
        }
        let contentType = ContentTypes.contentType(container: container, streams: streams)
        var result = ProbeResult(
            source: path, formatName: formatName, container: container, contentType: contentType,
            duration: mediaDuration.map { ($0 * 1000).rounded() / 1000 }, bitRate: bitRate,
            isFastStart: fastStart, streams: streams)
        if container == "hls" {
            result.hls = try Self.hlsInfo(path: path, budget: budget)
        }
        lookup?.remember(result, requests: budget.state.pointee.requests)
        if let fetched, let remoteMemo, budget.state.pointee.requests == 1, result.hls == nil, result.dash == nil {
            remoteMemo.store(result, for: fetched)
        }
        return result
    }

    // MARK: - Streams

    static func describe(_ stream: UnsafeMutablePointer<AVStream>, index: Int) -> StreamInfo {
        guard let parameters = stream.pointee.codecpar?.pointee else {
            return StreamInfo(index: index, kind: .unknown, codec: "unknown")
        }
        let codecName = castprep_avcodec_get_name(parameters.codec_id).map { String(cString: $0) } ?? "unknown"
        let kind: StreamInfo.Kind =
            switch parameters.codec_type {
            case AVMEDIA_TYPE_VIDEO: .video
            case AVMEDIA_TYPE_AUDIO: .audio
            case AVMEDIA_TYPE_SUBTITLE: .subtitle
            case AVMEDIA_TYPE_DATA: .data
            case AVMEDIA_TYPE_ATTACHMENT: .attachment
            default: .unknown
            }
        var info = StreamInfo(index: index, kind: kind, codec: codecName)
        let disposition = stream.pointee.disposition
        info.isDefault = disposition & 0x1 != 0  // AV_DISPOSITION_DEFAULT
        info.isForced = disposition & 0x40 != 0  // AV_DISPOSITION_FORCED
        info.isAttachedPicture = disposition & 0x400 != 0  // AV_DISPOSITION_ATTACHED_PIC
        if let entry = castprep_av_dict_get(stream.pointee.metadata, "language", nil, 0),
            let value = entry.pointee.value
        {
            let language = String(cString: value)
            if !language.isEmpty, language != "und" { info.language = language }
        }
        if parameters.profile >= 0, let name = castprep_avcodec_profile_name(parameters.codec_id, parameters.profile) {
            info.profile = String(cString: name)
        }
        if parameters.level > 0 { info.level = Int(parameters.level) }
        let extradata: [UInt8] =
            if let pointer = parameters.extradata, parameters.extradata_size > 0 {
                Array(UnsafeBufferPointer(start: pointer, count: Int(parameters.extradata_size)))
            } else {
                []
            }
        let tag = fourCC(parameters.codec_tag)
        switch kind {
        case .video:
            info.width = parameters.width > 0 ? Int(parameters.width) : nil
            info.height = parameters.height > 0 ? Int(parameters.height) : nil
            let rate = stream.pointee.avg_frame_rate
            if rate.num > 0, rate.den > 0 { info.frameRate = (double(rate) * 1000).rounded() / 1000 }
            if let descriptor = castprep_av_pix_fmt_desc_get(AVPixelFormat(rawValue: parameters.format)) {
                info.bitDepth = Int(descriptor.pointee.comp.0.depth)
                let w = descriptor.pointee.log2_chroma_w
                let h = descriptor.pointee.log2_chroma_h
                info.chroma = w == 1 && h == 1 ? "4:2:0" : w == 1 && h == 0 ? "4:2:2" : w == 0 && h == 0 ? "4:4:4" : nil
            }
            switch parameters.color_trc {
            case AVCOL_TRC_SMPTE2084: info.hdrTransfer = "PQ"
            case AVCOL_TRC_ARIB_STD_B67: info.hdrTransfer = "HLG"
            default: break
            }
            var sideDataSize: Int = 0
            if let dovi = castprep_av_stream_get_side_data(stream, AV_PKT_DATA_DOVI_CONF, &sideDataSize),
                sideDataSize >= 3
            {
                info.dolbyVisionProfile = Int(dovi[2])  // dv_version_major, dv_version_minor, dv_profile
            }
            switch codecName {
            case "h264":
                info.codecString =
                    CodecStrings.avc(avcC: extradata, isInBand: tag == "avc3")
                    ?? CodecStrings.avc(profile: Int(parameters.profile), level: Int(parameters.level))
            case "hevc":
                info.codecString = CodecStrings.hevc(hvcC: extradata, isInBand: tag == "hev1")
            case "av1":
                info.codecString = CodecStrings.av1(av1C: extradata)
            case "vp9":
                let level =
                    parameters.level > 0
                    ? Int(parameters.level)
                    : CodecStrings.vp9Level(
                        width: info.width ?? 0, height: info.height ?? 0, frameRate: info.frameRate ?? 0)
                info.codecString = level.flatMap {
                    CodecStrings.vp9(profile: max(0, Int(parameters.profile)), level: $0, bitDepth: info.bitDepth ?? 8)
                }
            default:
                info.codecString = CodecStrings.simple(codec: codecName)
            }
        case .audio:
            info.channels = Int(parameters.ch_layout.nb_channels)
            var layout = parameters.ch_layout
            var buffer = [CChar](repeating: 0, count: 64)
            if castprep_av_channel_layout_describe(&layout, &buffer, buffer.count) > 0 {
                info.channelLayout = String(
                    decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            }
            info.sampleRate = parameters.sample_rate > 0 ? Int(parameters.sample_rate) : nil
            info.codecString =
                codecName == "aac"
                ? CodecStrings.aac(ffmpegProfile: Int(parameters.profile)) : CodecStrings.simple(codec: codecName)
        case .subtitle:
            if let descriptor = castprep_avcodec_descriptor_get(parameters.codec_id) {
                let properties = descriptor.pointee.props
                info.isTextSubtitle = properties & (1 << 17) != 0 ? true : properties & (1 << 16) != 0 ? false : nil
            }
        default:
            break
        }
        return info
    }

    /// Seconds from `HH:MM:SS.fraction`.
    static func clockSeconds(_ text: String) -> Double? {
        let parts = text.split(separator: ":")
        guard parts.count == 3, let hours = Double(parts[0]), let minutes = Double(parts[1]),
            let seconds = Double(parts[2])
        else { return nil }
        return hours * 3600 + minutes * 60 + seconds
    }

    /// The end of the last audio or video packet, read from a window at the end of the file,
    /// or nil when it cannot be found within a bounded number of packets.
    static func lastMediaTimestamp(
        _ context: UnsafeMutablePointer<AVFormatContext>, streams: [StreamInfo], containerDuration: Double
    ) -> Double? {
        let media = Set(
            streams.filter { ($0.kind == .video || $0.kind == .audio) && !$0.isAttachedPicture }.map(\.index))
        guard !media.isEmpty else { return nil }
        var latest: Double?
        // Search windows further and further back: subtitles can run far past the media's end.
        var window = 10.0
        while latest == nil, window <= max(20, containerDuration * 2) {
            let target = Int64(max(0, containerDuration - window) * 1_000_000)
            guard castprep_av_seek_frame(context, -1, target, 1) >= 0 else { return nil }  // AVSEEK_FLAG_BACKWARD
            var allocated = castprep_av_packet_alloc()
            defer { castprep_av_packet_free(&allocated) }
            guard let packet = allocated else { return nil }
            var read = 0
            while read < 20_000, castprep_av_read_frame(context, packet) >= 0 {
                read += 1
                let index = Int(packet.pointee.stream_index)
                if media.contains(index), let stream = context.pointee.streams[index],
                    packet.pointee.pts != castprep_AV_NOPTS_VALUE
                {
                    // Both come from the file: add them as Doubles, which cannot trap.
                    let end =
                        (Double(packet.pointee.pts) + Double(max(0, packet.pointee.duration)))
                        * double(stream.pointee.time_base)
                    latest = max(latest ?? 0, end)
                }
                castprep_av_packet_unref(packet)
            }
            window *= 4
        }
        return latest
    }

    // MARK: - DASH

    static func probeDASH(path: String, budget: ProbeBudget) throws(ProbeError) -> ProbeResult {
        var result = ProbeResult(
            source: path, formatName: "dash", container: "dash", contentType: "application/dash+xml",
            duration: nil, bitRate: nil, isFastStart: nil, streams: [])
        guard let text = try readText(path, budget: budget) else {
            throw ProbeError(
                "probe.unreadable", "cannot read the manifest", fix: "check the path and permissions", source: path)
        }
        do {
            let manifest = try DASHManifest.parse(Array(text.utf8))
            result.dash = manifest
            result.duration = manifest.duration
            // Represent each adaptation set's first representation as a stream, so verdicts and
            // reports see the codecs and sizes.
            for (index, set) in manifest.adaptationSets.enumerated() {
                guard let representation = set.representations.max(by: { ($0.bandwidth ?? 0) < ($1.bandwidth ?? 0) })
                else { continue }
                let mime = representation.mimeType ?? set.mimeType ?? ""
                let kind: StreamInfo.Kind =
                    mime.hasPrefix("video") || set.contentType == "video"
                    ? .video
                    : mime.hasPrefix("audio") || set.contentType == "audio" ? .audio : .subtitle
                let codecString = representation.codecs ?? set.codecs
                var stream = StreamInfo(
                    index: index, kind: kind, codec: codecString.map(Self.codecName(fromCodecString:)) ?? "unknown")
                stream.codecString = codecString
                stream.width = representation.width
                stream.height = representation.height
                stream.language = set.language
                result.streams.append(stream)
            }
        } catch {
            throw ProbeError(
                "probe.dash-malformed", "the DASH manifest cannot be read: \(error.description)",
                fix: "fix the MPD (it must be well-formed XML with an <MPD> root)", source: path)
        }
        return result
    }

    /// FFmpeg-style codec names from RFC 6381 strings, for verdicts on manifests.
    static func codecName(fromCodecString codec: String) -> String {
        let prefix = codec.split(separator: ".").first.map { $0.lowercased() } ?? codec
        return switch prefix {
        case "avc1", "avc3": "h264"
        case "hvc1", "hev1": "hevc"
        case "vp09": "vp9"
        case "av01": "av1"
        case "mp4a": codec.hasPrefix("mp4a.40.34") || codec.hasPrefix("mp4a.6B") ? "mp3" : "aac"
        case "ac-3": "ac3"
        case "ec-3": "eac3"
        case "wvtt": "webvtt"
        case "stpp": "ttml"
        default: prefix
        }
    }

    // MARK: - HLS

    /// Reads a master (or media) playlist and the first media playlist of each kind to learn
    /// how segments are packaged. Local paths and http(s) URLs; at most 16 MiB per playlist.
    static func hlsInfo(path: String, budget: ProbeBudget) throws(ProbeError) -> HLSInfo? {
        guard let text = try readText(path, budget: budget), let playlist = HLSPlaylist.parse(text) else { return nil }
        func media(_ uri: String?) throws(ProbeError) -> HLSMediaPlaylist? {
            guard let uri, let resolved = resolveReference(uri, against: path),
                let text = try readText(resolved, budget: budget),
                case .media(let playlist)? = HLSPlaylist.parse(text)
            else { return nil }
            return playlist
        }
        switch playlist {
        case .media(let playlist):
            return HLSInfo(
                variants: [], renditions: [], videoPackaging: playlist.segmentPackaging, audioPackaging: nil,
                isLive: playlist.isLive)
        case .master(let master):
            let video = try media(master.variants.first?.uri)
            let audio = try media(master.renditions.first { $0.type == "AUDIO" && $0.uri != nil }?.uri)
            return HLSInfo(
                variants: master.variants, renditions: master.renditions, videoPackaging: video?.segmentPackaging,
                audioPackaging: audio?.segmentPackaging, isLive: video?.isLive ?? false)
        }
    }

    /// Resolves a playlist reference against the playlist's own location (path or URL).
    static func resolveReference(_ reference: String, against base: String) -> String? {
        if reference.hasPrefix("http://") || reference.hasPrefix("https://") { return reference }
        let isURL = base.hasPrefix("http://") || base.hasPrefix("https://")
        if reference.hasPrefix("/") {
            guard isURL else { return reference }
            // Scheme and authority of the base, then the absolute path.
            let afterScheme = base.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
            guard afterScheme.count >= 3 else { return nil }
            return afterScheme[0] + "//" + afterScheme[2] + reference
        }
        var directory = base
        if let query = directory.firstIndex(where: { $0 == "?" || $0 == "#" }) {
            directory = String(directory[..<query])
        }
        guard let slash = directory.lastIndex(of: "/") else { return reference }
        return String(directory[...slash]) + reference
    }

    /// The text of a local file or an http(s) URL (read through FFmpeg's protocols within the
    /// probe's deadline and request budget), or nil; refuses anything over 16 MiB.
    ///
    /// - Throws: `probe.timeout` or `probe.too-many-requests` when the budget ran out.
    static func readText(_ path: String, budget: ProbeBudget) throws(ProbeError) -> String? {
        guard path.hasPrefix("http://") || path.hasPrefix("https://") else { return readText(path) }
        try budget.spendRequest(path: path)
        var options: OpaquePointer?
        castprep_av_dict_set(&options, "rw_timeout", String(Int(max(0.001, budget.remainingSeconds) * 1_000_000)), 0)
        defer { castprep_av_dict_free(&options) }
        var context: UnsafeMutablePointer<AVIOContext>?
        var interrupt = budget.interruptCallback
        let opened = castprep_avio_open2(&context, path, 1, &interrupt, &options)  // AVIO_FLAG_READ
        guard opened >= 0, let io = context else {
            if budget.isSpent { throw budget.error(for: opened, stage: "read", path: path) }
            return nil
        }
        defer { castprep_avio_closep(&context) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while bytes.count <= 16 << 20 {
            let count = chunk.withUnsafeMutableBufferPointer { castprep_avio_read(io, $0.baseAddress, Int32($0.count)) }
            if count <= 0 {
                if count < 0, budget.isSpent { throw budget.error(for: count, stage: "read", path: path) }
                break
            }
            bytes.append(contentsOf: chunk.prefix(Int(count)))
        }
        guard bytes.count <= 16 << 20 else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text of a local file of at most 16 MiB.
    static func readText(_ path: String) -> String? {
        guard let bytes = try? FileSystem.readFile(at: path, limit: 16 << 20) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    // MARK: - Helpers

    static func container(formatName: String, fileExtension: String, streams: [StreamInfo]) -> String {
        let names = Set(formatName.split(separator: ",").map(String.init))
        if names.contains("mp4") || names.contains("mov") { return fileExtension == "mov" ? "mov" : "mp4" }
        if names.contains("matroska") || names.contains("webm") {
            let webmCodecs: Set<String> = ["vp8", "vp9", "av1", "opus", "vorbis", "webvtt"]
            return fileExtension != "mkv" && streams.allSatisfy { webmCodecs.contains($0.codec) } ? "webm" : "matroska"
        }
        return formatName.split(separator: ",").first.map(String.init) ?? formatName
    }

    static func fastStart(path: String) -> Bool? {
        let types: [String]
        do {
            types = try FileSystem.withPositionalReader(at: path) {
                (size: Int64, read: (Int64, Int) -> [UInt8]?) -> [String] in
                MP4Boxes.topLevelTypes(fileSize: Int(size)) { offset -> [UInt8]? in
                    guard let header = read(Int64(offset), 16), header.count >= 8 else { return nil }
                    return header
                }
            }
        } catch {
            return nil
        }
        return MP4Boxes.isFastStart(types)
    }

    static func fourCC(_ tag: UInt32) -> String {
        let bytes = [UInt8(tag & 0xFF), UInt8((tag >> 8) & 0xFF), UInt8((tag >> 16) & 0xFF), UInt8(tag >> 24)]
        return String(decoding: bytes, as: UTF8.self)
    }

    static func double(_ rational: AVRational) -> Double {
        rational.den == 0 ? 0 : Double(rational.num) / Double(rational.den)
    }

    static func monotonicSeconds() -> Double { MonotonicTime.seconds }

    static func error(for status: Int32, stage: String, path: String, timedOut: Bool) -> ProbeError {
        let isURL = path.hasPrefix("http://") || path.hasPrefix("https://")
        if timedOut {
            if isURL {
                return ProbeError(
                    "http.timeout",
                    "the server did not finish answering within the probe's timeout (one deadline for every read of the URL)",
                    fix: "check that the server is up and answers; raise the timeout for slow links", source: path)
            }
            return ProbeError(
                "probe.timeout", "gave up after the probe timeout while trying to \(stage) the media",
                fix: "check that the file is complete and the server answers; raise the timeout for slow links",
                source: path)
        }
        var buffer = [CChar](repeating: 0, count: 256)
        castprep_av_strerror(status, &buffer, buffer.count)
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if isURL, let network = networkError(for: status, text: text, url: path) {
            return network
        }
        if status == castprep_AVERROR(2) {  // ENOENT
            return ProbeError("probe.not-found", "no such file", fix: "check the path", source: path)
        }
        if text.hasPrefix("Server returned") {
            // FFmpeg's HTTP errors (AVERROR_HTTP_*) read "Server returned 404 Not Found" and the like.
            return ProbeError(
                "probe.http-status", "the server answered: \(text.dropFirst("Server returned ".count))",
                fix: "check the URL, and that the server allows this client (try castprep check URL)", source: path)
        }
        if status == castprep_AVERROR(13) {  // EACCES
            return ProbeError(
                "probe.permission-denied", "permission denied", fix: "check the file's permissions", source: path)
        }
        return ProbeError(
            "probe.not-media", "FFmpeg cannot \(stage) this as media: \(text)",
            fix: "the file is not audio or video, or it is truncated or corrupt; re-export or re-download it",
            source: path)
    }
}

extension MediaProber {
    /// A failure to reach a URL, with the code HTTPCheck gives the same failure
    /// (`http.connect-failed`, `http.dns-failed`, `http.timeout`, `http.transfer-failed`), or nil
    /// when `status` is not a network error.
    ///
    /// FFmpeg's network protocols return `AVERROR(errno)` from the socket calls; a name that does
    /// not resolve comes back as `AVERROR(EIO)` (FFmpeg logs the resolver's reason and returns
    /// EIO), so on EIO the host is resolved once more here to tell the two apart.
    static func networkError(for status: Int32, text: String, url: String) -> ProbeError? {
        let host = urlHost(url) ?? url
        switch -status {
        case ECONNREFUSED:
            return ProbeError(
                "http.connect-failed", "the connection to \(host) was refused: nothing listens on that port",
                fix: "start the server, or check the URL's host and port", source: url)
        case EHOSTUNREACH, ENETUNREACH, EADDRNOTAVAIL, ENETDOWN, EHOSTDOWN:
            return ProbeError(
                "http.connect-failed", "\(host) cannot be reached: \(text)",
                fix: "check the URL's host, and that this machine has a route to it", source: url)
        case ETIMEDOUT:
            return ProbeError(
                "http.timeout", "\(host) did not answer in time",
                fix: "check that the server is up and answers; raise the timeout for slow links", source: url)
        case ECONNRESET, EPIPE, ECONNABORTED:
            return ProbeError(
                "http.transfer-failed", "\(host) dropped the connection: \(text)",
                fix: "check the server and anything in front of it (proxy, CDN)", source: url)
        case EIO:
            if !resolves(host) {
                return ProbeError(
                    "http.dns-failed", "the host name \(host) does not resolve",
                    fix: "check the URL's host name, and the DNS settings of this machine", source: url)
            }
            return ProbeError(
                "http.transfer-failed",
                "reading \(host) failed: \(text) (a broken connection or a failed TLS handshake)",
                fix: "check the server and anything in front of it (proxy, CDN); try castprep check URL", source: url)
        default:
            return nil
        }
    }

    /// The host of an http(s) URL (brackets kept for IPv6), without user info or port.
    static func urlHost(_ url: String) -> String? {
        let parts = url.split(separator: "/", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].hasSuffix(":"), parts[1].isEmpty else { return nil }
        var authority = parts[2].prefix { $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            return String(authority[...close])
        }
        let host = authority.prefix { $0 != ":" }
        return host.isEmpty ? nil : String(host)
    }

    /// Whether `host` resolves to an address (a literal address always does). Blocks for the
    /// resolver: called only on the prober's own queue.
    static func resolves(_ host: String) -> Bool {
        (try? AddressResolver.lookUpBlocking(host: host, port: 0)) != nil
    }
}

/// Cast content types for probed containers.
public enum ContentTypes {
    /// The `contentType` for a container and its streams, with `codecs` when every audio and
    /// video codec string is known (a partial list would mislead the receiver).
    public static func contentType(container: String, streams: [StreamInfo]) -> String {
        let hasVideo = streams.contains { $0.kind == .video && !$0.isAttachedPicture }
        let base: String =
            switch container {
            case "mp4": hasVideo ? "video/mp4" : "audio/mp4"
            case "mov": "video/quicktime"
            case "webm": hasVideo ? "video/webm" : "audio/webm"
            case "matroska": "video/x-matroska"
            case "mpegts": "video/mp2t"
            case "mp3": "audio/mpeg"
            case "flac": "audio/flac"
            case "ogg": hasVideo ? "video/ogg" : "audio/ogg"
            case "wav": "audio/wav"
            case "aac": "audio/aac"
            case "hls": "application/x-mpegurl"
            case "dash": "application/dash+xml"
            case "srt": "application/x-subrip"
            case "ass": "text/x-ssa"
            case "webvtt": "text/vtt"
            default: "application/octet-stream"
            }
        guard ["mp4", "webm", "mpegts", "ogg"].contains(container) else { return base }
        let media = streams.filter { ($0.kind == .video && !$0.isAttachedPicture) || $0.kind == .audio }
        let codecs = media.compactMap(\.codecString)
        guard !media.isEmpty, codecs.count == media.count else { return base }
        return base + "; codecs=\"" + codecs.joined(separator: ", ") + "\""
    }
}
