import CastModel
internal import CastModel

#if canImport(Glibc)
internal import Glibc

private let systemWrite = Glibc.write
#elseif canImport(Darwin)
internal import Darwin

private let systemWrite = Darwin.write
#endif

/// Writes output files atomically and never over an input.
///
/// The text goes to a temporary file in the destination's directory (so the final
/// `rename(2)` stays on one file system and is atomic), is flushed with `fsync` when it
/// replaces an existing file, and then takes the destination's place. A reader of the destination sees the old file or the new one,
/// never half of one. The destination is compared with every input by device and inode
/// (and by resolved path), so `convert movie.vtt -o movie.vtt`, a hard link or a symlink
/// to an input are all refused before anything is written.
///
/// ```swift
/// try CaptionFileWriter.write(result.webVTT, to: "out/movie.en.vtt", inputs: ["movie.en.srt"])
/// ```
public enum CaptionFileWriter {
    /// Writes `text` as UTF-8 to `path`, replacing any existing file atomically.
    ///
    /// - Parameters:
    ///   - text: The file content.
    ///   - path: The destination file.
    ///   - inputs: Files that must not be overwritten (the conversion's inputs).
    /// - Throws: ``CaptionError`` `captions.output-is-input`, `captions.write-failed`.
    public static func write(_ text: String, to path: String, inputs: [String] = []) throws(CaptionError) {
        try write(bytes: Array(text.utf8), to: path, inputs: inputs)
    }

    /// Writes `bytes` to `path`, replacing any existing file atomically.
    public static func write(bytes: [UInt8], to path: String, inputs: [String] = []) throws(CaptionError) {
        try write(to: path, inputs: inputs) { descriptor in bytes.withUnsafeBytes { writeAll($0, to: descriptor) } }
    }

    /// Writes a converted WebVTT file to `path`, replacing any existing file atomically; its
    /// parts go out as the converter left them, without being joined first.
    public static func write(_ webVTT: ConvertedWebVTT, to path: String, inputs: [String] = []) throws(CaptionError) {
        try write(to: path, inputs: inputs) { descriptor in webVTT.forEachPart { writeAll($0, to: descriptor) } }
    }

    /// Writes all of `buffer`, retrying short and interrupted writes; false on an error.
    private static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
        var offset = 0
        while offset < buffer.count {
            guard let base = buffer.baseAddress else { return false }
            let result = systemWrite(descriptor, base + offset, buffer.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += result
        }
        return true
    }

    /// The atomic replacement: checks the inputs, writes a temporary file with `contents`,
    /// flushes it and renames it over `path`.
    private static func write(to path: String, inputs: [String], contents: (Int32) -> Bool) throws(CaptionError) {
        let target = identity(of: path)
        for input in inputs {
            let source = identity(of: input)
            let sameFile = target.inode != nil && target.inode == source.inode
            let samePath = target.resolved != nil && target.resolved == source.resolved
            if sameFile || samePath {
                throw CaptionError(
                    "captions.output-is-input", "the output \(path) is the input \(input); refusing to overwrite it",
                    fix: "choose another output file name with -o")
            }
        }
        let directory = directoryName(path)
        let base = path.split(separator: "/").last.map(String.init) ?? "captions"
        // mkstemp(3) replaces the six trailing X characters with a unique suffix.
        var template = Array("\(directory)/.\(base).XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let address = buffer.baseAddress else { return -1 }
            return mkstemp(address)
        }
        guard descriptor >= 0 else {
            throw failure("cannot create a temporary file in \(directory)", path: path)
        }
        let temporary = template.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        var succeeded = false
        defer {
            if !succeeded { unlink(temporary) }
        }
        let written = contents(descriptor)
        // Replacing a file puts its old content at stake: flush the new one before the rename,
        // so a crash leaves one of the two whole. A new file replaces nothing; like any other
        // tool's output it reaches the disk when the system writes it back.
        let replacing = target.inode != nil
        let synced = written && (!replacing || fsync(descriptor) == 0)
        // mkstemp creates the file 0600; caption files are meant to be served, so make them
        // world-readable like any other output. Failure here is not worth failing the write.
        _ = fchmod(descriptor, 0o644)
        let closed = close(descriptor) == 0
        guard written, synced, closed else {
            throw failure("cannot write \(temporary)", path: path)
        }
        guard rename(temporary, path) == 0 else {
            throw failure("cannot rename \(temporary) to \(path)", path: path)
        }
        succeeded = true
    }

    private static func failure(_ what: String, path: String) -> CaptionError {
        let reason = String(cString: strerror(errno))
        return CaptionError(
            "captions.write-failed", "\(what): \(reason) (errno \(errno))",
            fix: "check that the directory exists and is writable")
    }

    private static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }

    private static func identity(of path: String) -> (inode: [UInt64]?, resolved: String?) {
        var info = stat()
        let inode: [UInt64]? = stat(path, &info) == 0 ? [UInt64(info.st_dev), UInt64(info.st_ino)] : nil
        var resolved: String?
        if let pointer = realpath(path, nil) {
            resolved = String(cString: pointer)
            free(pointer)
        }
        return (inode, resolved)
    }
}
