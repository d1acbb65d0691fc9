internal import Dispatch

extension EmbeddedSubtitleExtractor {
    /// Reads one text subtitle stream without blocking Swift's cooperative thread pool.
    ///
    /// libavformat and libavcodec block on file I/O and decoding, so the work runs on a
    /// dedicated dispatch queue (GCD's own threads, not the Swift concurrency pool), bridged
    /// back with a continuation that is resumed exactly once.
    ///
    /// ```swift
    /// let read = try await EmbeddedSubtitleExtractor.extract(path: "movie.mkv", stream: 2)
    /// let result = try CaptionConverter.convert(read, fileName: "movie.mkv")
    /// ```
    ///
    /// - Parameters:
    ///   - path: The media file.
    ///   - stream: The container's stream index (`--stream N`), or nil for the first text
    ///     subtitle stream.
    ///   - options: Limits and the file name used in diagnostics.
    /// - Throws: ``CaptionError``; see ``extractBlocking(path:stream:options:)``.
    public static func extract(path: String, stream: Int? = nil, options: CaptionReadOptions? = nil) async throws
        -> CaptionReadResult
    {
        let readOptions = options ?? CaptionReadOptions(fileName: path)
        return try await withCheckedThrowingContinuation { continuation in
            ffmpegQueue.async {
                do {
                    continuation.resume(
                        returning: try extractBlocking(path: path, stream: stream, options: readOptions))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Lists the subtitle streams of a media file without blocking the cooperative pool.
    public static func subtitleStreams(path: String) async throws -> [EmbeddedSubtitleStream] {
        try await withCheckedThrowingContinuation { continuation in
            ffmpegQueue.async {
                do {
                    continuation.resume(returning: try subtitleStreams(path: path))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }
}

/// Where blocking FFmpeg work runs: concurrent, so two extractions do not wait for each
/// other, and outside the cooperative pool.
private let ffmpegQueue = DispatchQueue(label: "castprep.captions.ffmpeg", qos: .userInitiated, attributes: .concurrent)
