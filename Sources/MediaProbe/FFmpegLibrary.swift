internal import CFFmpeg
internal import CastModel

/// FFmpeg is loaded the first time a probe needs it instead of being linked (CFFmpeg.h says
/// why: ~130 shared libraries at every start of castprep). Every entry point that calls
/// FFmpeg checks here first, so a missing library is a probe error with a fix, not a crash.
enum FFmpegLibrary {
    /// The Debian packages with the FFmpeg libraries this build loads.
    static var packages: String {
        "libavformat\(LIBAVFORMAT_VERSION_MAJOR) libavcodec\(LIBAVCODEC_VERSION_MAJOR) "
            + "libavutil\(LIBAVUTIL_VERSION_MAJOR) libswscale\(LIBSWSCALE_VERSION_MAJOR)"
    }

    /// Loads FFmpeg if it is not loaded yet.
    ///
    /// - Throws: ``ProbeError`` `probe.ffmpeg-missing` when a library or function is missing.
    static func requireLoaded(source: String) throws(ProbeError) {
        guard let error = castprep_ffmpeg_load_error() else { return }
        throw ProbeError(
            "probe.ffmpeg-missing", String(cString: error),
            fix: "install FFmpeg's shared libraries: apt-get install \(packages)", source: source)
    }
}
