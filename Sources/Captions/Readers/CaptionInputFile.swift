internal import SystemIO

/// A caption file's bytes, checked against the size limit before any of them is read.
///
/// Why not read it into an array: the bytes are a SystemIO `LoadedFile`, read in one call into
/// memory sized from the file's length and backed by 2 MiB pages where the system allows them.
/// Reading a 7 MB file into a growing array cost copies plus a page fault and a cleared page
/// for every 4 KiB, a visible part of converting it. The file is not mapped (a mapped file
/// truncated by another process meanwhile ends the process with `SIGBUS`); a pipe or a device
/// is read in growing steps, at most one byte past the limit.
///
/// ```swift
/// guard let input = try CaptionInputFile.open(path: "movie.srt") else { … cannot read … }
/// let format = CaptionFormat.detect(fileExtension: "srt", data: input.prefix(4096)) ?? .srt
/// let report = try CaptionConverter.convertFile(input, format: format, to: "movie.vtt")
/// ```
public final class CaptionInputFile: Sendable {
    private let file: LoadedFile

    private init(_ file: LoadedFile) {
        self.file = file
    }

    /// The file's size in bytes.
    public var count: Int { file.count }

    /// Opens the file at `path`; nil when it cannot be opened or read.
    ///
    /// Blocks on the file system: call it off Swift's cooperative pool.
    ///
    /// - Throws: ``CaptionError`` `captions.input-too-large` when the file is larger than
    ///   `limits.maxInputBytes` (nothing of it is read then).
    public static func open(path: String, limits: CaptionLimits = .standard) throws(CaptionError) -> CaptionInputFile? {
        do {
            return CaptionInputFile(try LoadedFile.read(path: path, limit: limits.maxInputBytes))
        } catch .tooLarge(let size) {
            let what = size.map { "\($0) bytes" } ?? "more than \(limits.maxInputBytes) bytes"
            throw TextInput.tooLarge(what, limits: limits, fileName: path)
        } catch {
            return nil
        }
    }

    /// The whole file as an array (a copy).
    public var contents: [UInt8] { withBytes { Array($0) } }

    /// The first `maxLength` bytes (a copy), for ``CaptionFormat/detect(fileExtension:data:)``,
    /// which looks at no more than the first 4 KiB.
    public func prefix(_ maxLength: Int) -> [UInt8] {
        withBytes { Array($0.prefix(maxLength)) }
    }

    /// Calls `body` with the file's bytes, which stay valid until it returns.
    func withBytes<Result, Failure: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        try file.withBytes(body)
    }
}
