import CastModel
internal import CastModel
internal import SystemIO

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
        let file = try PendingCaptionFile(path: path, inputs: inputs)
        file.write(bytes)
        try file.commit()
    }

    /// Writes a converted WebVTT file to `path`, replacing any existing file atomically; its
    /// parts go out as the converter left them, without being joined first.
    public static func write(_ webVTT: ConvertedWebVTT, to path: String, inputs: [String] = []) throws(CaptionError) {
        let file = try PendingCaptionFile(path: path, inputs: inputs)
        file.write(webVTT)
        try file.commit()
    }

    /// Whether `path` and `other` name the same existing file (by device and inode, so hard
    /// links and symbolic links count) or resolve to the same path.
    public static func isSameFile(_ path: String, as other: String) -> Bool {
        let (one, two) = (identity(of: path), identity(of: other))
        return (one.inode != nil && one.inode == two.inode) || (one.resolved != nil && one.resolved == two.resolved)
    }

    /// Who `path` is: device and inode when it exists, and the resolved path.
    static func identity(of path: String) -> (inode: FileIdentity?, resolved: String?) {
        (FileSystem.identity(of: path), FileSystem.resolvedPath(path))
    }

    static func failure(_ what: String, _ error: SystemCallError) -> CaptionError {
        CaptionError(
            "captions.write-failed", "\(what): \(error.reason) (errno \(error.errno))",
            fix: "check that the directory exists and is writable")
    }

    static func directoryName(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[..<slash])
    }
}

/// One atomic replacement in steps: a temporary file beside the destination, written in as
/// many pieces as the caller likes, that takes the destination's place on ``commit()``.
///
/// The SRT streaming converter writes its output here chunk by chunk instead of building it in
/// memory first. The rules are ``CaptionFileWriter``'s: never over an input, `fsync` before
/// the rename only when a file is replaced, mode 0644. A write failure is remembered and
/// reported by ``commit()``; a file never committed is removed when the value goes away.
final class PendingCaptionFile {
    let path: String
    private let directory: String
    private let base: String
    /// Whether the destination exists (its content is then at stake: flush before renaming).
    private let isReplacing: Bool
    private var file: TemporaryFile
    /// Bytes written so far.
    private(set) var count = 0
    /// The first failed write, if any.
    private var writeError: SystemCallError?

    /// Checks that `path` is none of `inputs` and creates the temporary file.
    ///
    /// - Throws: ``CaptionError`` `captions.output-is-input`, `captions.write-failed`.
    init(path: String, inputs: [String]) throws(CaptionError) {
        let target = CaptionFileWriter.identity(of: path)
        for input in inputs {
            let source = CaptionFileWriter.identity(of: input)
            let sameFile = target.inode != nil && target.inode == source.inode
            let samePath = target.resolved != nil && target.resolved == source.resolved
            if sameFile || samePath {
                throw CaptionError(
                    "captions.output-is-input", "the output \(path) is the input \(input); refusing to overwrite it",
                    fix: "choose another output file name with -o")
            }
        }
        self.path = path
        directory = CaptionFileWriter.directoryName(path)
        base = path.split(separator: "/").last.map(String.init) ?? "captions"
        isReplacing = target.inode != nil
        do {
            file = try TemporaryFile(directory: directory, baseName: base)
        } catch {
            throw CaptionFileWriter.failure("cannot create a temporary file in \(directory)", error)
        }
    }

    /// Appends `bytes`; after a failure nothing more is written.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard writeError == nil else { return }
        do {
            try file.write(bytes)
            count += bytes.count
        } catch {
            writeError = error
        }
    }

    func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        write(UnsafeRawBufferPointer(bytes))
    }

    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Appends a converted file, part by part.
    func write(_ webVTT: ConvertedWebVTT) {
        _ = webVTT.forEachPart { part in
            write(part)
            return writeError == nil
        }
    }

    /// Empties the file, to write it again from the start.
    func removeAll() {
        guard writeError == nil else { return }
        do {
            try file.removeAll()
            count = 0
        } catch {
            writeError = error
        }
    }

    /// Replaces the first `length` bytes written with `prefix`, keeping the rest: the rest is
    /// copied after `prefix` into a new temporary file, which takes this one's place.
    func replacePrefix(length: Int, with prefix: [UInt8]) {
        guard writeError == nil else { return }
        do throws(SystemCallError) {
            let replacement = try TemporaryFile(directory: directory, baseName: base)
            try replacement.write(prefix)
            let chunk = 1 << 20
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 16)
            defer { buffer.deallocate() }
            var offset = length
            while offset < count {
                let wanted = UnsafeMutableRawBufferPointer(rebasing: buffer[..<min(chunk, count - offset)])
                let got = try file.read(at: offset, into: wanted)
                // The file is shorter than what was written to it: someone cut it.
                guard got > 0 else { throw SystemCallError("pread", errno: SystemCallError.inputOutputErrorNumber) }
                try replacement.write(UnsafeRawBufferPointer(rebasing: buffer[..<got]))
                offset += got
            }
            file.discard()
            file = replacement
            count = prefix.count + count - length
        } catch {
            // A replacement that failed halfway is removed when it goes out of scope.
            writeError = error
        }
    }

    /// Flushes the file when it replaces one, makes it world-readable and renames it over
    /// the destination.
    ///
    /// - Throws: ``CaptionError`` `captions.write-failed`; the temporary file is removed.
    func commit() throws(CaptionError) {
        if let writeError {
            file.discard()
            throw CaptionFileWriter.failure("cannot write \(file.path)", writeError)
        }
        // Replacing a file puts its old content at stake: flush the new one before the rename,
        // so a crash leaves one of the two whole. A new file replaces nothing; like any other
        // tool's output it reaches the disk when the system writes it back. mkstemp creates the
        // file 0600; caption files are meant to be served, so they become world-readable.
        do {
            try file.commit(to: path, flush: isReplacing, permissions: 0o644)
        } catch {
            let what = error.call == "rename" ? "cannot rename \(file.path) to \(path)" : "cannot write \(file.path)"
            throw CaptionFileWriter.failure(what, error)
        }
    }
}
