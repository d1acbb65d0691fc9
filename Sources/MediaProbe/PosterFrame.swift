internal import CFFmpeg
import CastModel
import SystemIO

/// Extracts one representative frame of a video as a JPEG, for report cards.
///
/// The frame is taken at 10% of the duration (skipping black lead-ins), decoded with
/// libavcodec, scaled to at most ``maximumWidth`` pixels wide with libswscale, and encoded
/// with FFmpeg's MJPEG encoder. Work is bounded by the same timeout as probing and by a cap on
/// the packets read.
public struct PosterFrame: Sendable {
    /// Widest poster produced, in pixels; reports show posters as thumbnails.
    public var maximumWidth: Int
    /// Seconds after which the extraction is abandoned.
    public var timeout: Double

    /// Creates an extractor.
    public init(maximumWidth: Int = 480, timeout: Double = 15) {
        self.maximumWidth = maximumWidth
        self.timeout = timeout
    }

    /// The JPEG bytes of a frame of `path`'s first video stream.
    public func jpeg(from path: String) throws(ProbeError) -> [UInt8] {
        try FFmpegLibrary.requireLoaded(source: path)
        var context: UnsafeMutablePointer<AVFormatContext>?
        guard castprep_avformat_open_input(&context, path, nil, nil) >= 0, let format = context else {
            throw ProbeError(
                "poster.open-failed", "cannot open the file to take a poster frame", fix: "probe it first to see why",
                source: path)
        }
        defer { castprep_avformat_close_input(&context) }
        guard castprep_avformat_find_stream_info(format, nil) >= 0 else {
            throw ProbeError(
                "poster.open-failed", "cannot read the streams", fix: "probe it first to see why", source: path)
        }
        var decoderCodec: UnsafePointer<AVCodec>?
        let streamIndex = castprep_av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, &decoderCodec, 0)
        guard streamIndex >= 0, let codec = decoderCodec, let stream = format.pointee.streams[Int(streamIndex)],
            let parameters = stream.pointee.codecpar
        else {
            throw ProbeError(
                "poster.no-video", "the file has no video stream to take a poster from",
                fix: "use artwork from the catalog instead", source: path)
        }
        var decoderContext = castprep_avcodec_alloc_context3(codec)
        defer { castprep_avcodec_free_context(&decoderContext) }
        guard let decoder = decoderContext else {
            throw ProbeError("poster.out-of-memory", "cannot allocate a decoder", source: path)
        }
        guard castprep_avcodec_parameters_to_context(decoder, parameters) >= 0,
            castprep_avcodec_open2(decoder, codec, nil) >= 0
        else {
            throw ProbeError(
                "poster.decoder", "cannot open a decoder for this video",
                fix: "the codec may be unsupported by this FFmpeg build", source: path)
        }
        // Seek to 10% in: the opening frames are often black.
        if format.pointee.duration > 0 {
            let target = format.pointee.duration / 10
            _ = castprep_av_seek_frame(format, -1, target, 1)  // AVSEEK_FLAG_BACKWARD
        }
        var packet = castprep_av_packet_alloc()
        var frame = castprep_av_frame_alloc()
        defer {
            castprep_av_packet_free(&packet)
            castprep_av_frame_free(&frame)
        }
        guard let packet, let frame else {
            throw ProbeError("poster.out-of-memory", "cannot allocate buffers", source: path)
        }
        let started = Self.now()
        var decoded = false
        var packetsRead = 0
        readLoop: while !decoded, packetsRead < 2_000, Self.now() - started < timeout {
            let status = castprep_av_read_frame(format, packet)
            if status < 0 {
                // End of file: flush the decoder for any frame it still holds.
                castprep_avcodec_send_packet(decoder, nil)
                decoded = castprep_avcodec_receive_frame(decoder, frame) >= 0
                break readLoop
            }
            packetsRead += 1
            defer { castprep_av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            guard castprep_avcodec_send_packet(decoder, packet) >= 0 else { continue }
            if castprep_avcodec_receive_frame(decoder, frame) >= 0 { decoded = true }
        }
        guard decoded, frame.pointee.width > 0, frame.pointee.height > 0 else {
            throw ProbeError(
                "poster.no-frame", "no video frame could be decoded", fix: "the file may be truncated or corrupt",
                source: path)
        }
        return try encode(frame, source: path)
    }

    func encode(_ frame: UnsafeMutablePointer<AVFrame>, source: String) throws(ProbeError) -> [UInt8] {
        let width = Int(frame.pointee.width)
        let height = Int(frame.pointee.height)
        let scale = width > maximumWidth ? Double(maximumWidth) / Double(width) : 1
        // Even dimensions: 4:2:0 needs them.
        let outWidth = max(2, Int((Double(width) * scale).rounded()) & ~1)
        let outHeight = max(2, Int((Double(height) * scale).rounded()) & ~1)
        guard let encoderCodec = castprep_avcodec_find_encoder(AV_CODEC_ID_MJPEG) else {
            throw ProbeError("poster.encoder", "this FFmpeg build has no MJPEG encoder", source: source)
        }
        var encoderContext = castprep_avcodec_alloc_context3(encoderCodec)
        defer { castprep_avcodec_free_context(&encoderContext) }
        guard let encoder = encoderContext else {
            throw ProbeError("poster.out-of-memory", "cannot allocate an encoder", source: source)
        }
        encoder.pointee.width = Int32(outWidth)
        encoder.pointee.height = Int32(outHeight)
        encoder.pointee.pix_fmt = AV_PIX_FMT_YUVJ420P
        encoder.pointee.time_base = AVRational(num: 1, den: 25)
        encoder.pointee.flags |= 1 << 1  // AV_CODEC_FLAG_QSCALE
        encoder.pointee.global_quality = 4 * 118  // qscale 4 × FF_QP2LAMBDA: good quality, small file
        guard castprep_avcodec_open2(encoder, encoderCodec, nil) >= 0 else {
            throw ProbeError("poster.encoder", "cannot open the MJPEG encoder", source: source)
        }
        guard
            let scaler = castprep_sws_getContext(
                Int32(width), Int32(height), AVPixelFormat(rawValue: frame.pointee.format), Int32(outWidth),
                Int32(outHeight),
                AV_PIX_FMT_YUVJ420P, 4, nil, nil, nil)  // SWS_BICUBIC
        else {
            throw ProbeError("poster.scale", "cannot convert this pixel format", source: source)
        }
        defer { castprep_sws_freeContext(scaler) }
        var scaled = castprep_av_frame_alloc()
        defer { castprep_av_frame_free(&scaled) }
        guard let output = scaled else {
            throw ProbeError("poster.out-of-memory", "cannot allocate a frame", source: source)
        }
        output.pointee.width = Int32(outWidth)
        output.pointee.height = Int32(outHeight)
        output.pointee.format = AV_PIX_FMT_YUVJ420P.rawValue
        guard castprep_av_frame_get_buffer(output, 0) >= 0 else {
            throw ProbeError("poster.out-of-memory", "cannot allocate a frame", source: source)
        }
        let sourceData = withUnsafePointer(to: &frame.pointee.data) {
            $0.withMemoryRebound(to: UnsafePointer<UInt8>?.self, capacity: 8) { $0 }
        }
        let sourceLines = withUnsafePointer(to: &frame.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: 8) { $0 }
        }
        let targetData = withUnsafePointer(to: &output.pointee.data) {
            $0.withMemoryRebound(to: UnsafeMutablePointer<UInt8>?.self, capacity: 8) { $0 }
        }
        let targetLines = withUnsafePointer(to: &output.pointee.linesize) {
            $0.withMemoryRebound(to: Int32.self, capacity: 8) { $0 }
        }
        castprep_sws_scale(scaler, sourceData, sourceLines, 0, Int32(height), targetData, targetLines)
        output.pointee.pts = 0
        var packet = castprep_av_packet_alloc()
        defer { castprep_av_packet_free(&packet) }
        guard let packet, castprep_avcodec_send_frame(encoder, output) >= 0,
            castprep_avcodec_receive_packet(encoder, packet) >= 0, let data = packet.pointee.data
        else {
            throw ProbeError("poster.encoder", "the MJPEG encoder produced nothing", source: source)
        }
        return Array(UnsafeBufferPointer(start: data, count: Int(packet.pointee.size)))
    }

    static func now() -> Double { MonotonicTime.seconds }
}
