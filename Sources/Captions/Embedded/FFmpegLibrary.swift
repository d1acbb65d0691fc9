internal import CFFmpeg
internal import CastModel

/// FFmpeg is loaded the first time a media file is read instead of being linked (CFFmpeg.h
/// says why: ~130 shared libraries at every start of castprep, even to convert an .srt). The
/// extractor checks here first, so a missing library is an error with a fix, not a crash.
enum FFmpegLibrary {
    /// The Debian packages with the FFmpeg libraries this build loads.
    static var packages: String {
        "libavformat\(LIBAVFORMAT_VERSION_MAJOR) libavcodec\(LIBAVCODEC_VERSION_MAJOR) "
            + "libavutil\(LIBAVUTIL_VERSION_MAJOR) libswscale\(LIBSWSCALE_VERSION_MAJOR)"
    }

    /// Loads FFmpeg if it is not loaded yet.
    ///
    /// - Throws: ``CaptionError`` `captions.ffmpeg-missing` when a library or function is missing.
    static func requireLoaded(path: String) throws(CaptionError) {
        guard let error = castprep_ffmpeg_load_error() else { return }
        throw CaptionError(
            "captions.ffmpeg-missing", "cannot read subtitle streams of \(path): \(String(cString: error))",
            fix: "install FFmpeg's shared libraries: apt-get install \(packages), or convert a sidecar caption file",
            location: Diagnostic.SourceLocation(file: path))
    }
}
