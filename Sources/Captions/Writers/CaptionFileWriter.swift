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

    /// Writes all of `buffer`, retrying short and interrupted writes; false on an error.
    static func writeAll(_ buffer: UnsafeRawBufferPointer, to descriptor: Int32) -> Bool {
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

    /// Whether `path` and `other` name the same existing file (by device and inode, so hard
    /// links and symbolic links count) or resolve to the same path.
    public static func isSameFile(_ path: String, as other: String) -> Bool {
        let (one, two) = (identity(of: path), identity(of: other))
        return (one.inode != nil && one.inode == two.inode) || (one.resolved != nil && one.resolved == two.resolved)
    }

    /// Who `path` is: device and inode when it exists, and the resolved path.
    static func identity(of path: String) -> (inode: [UInt64]?, resolved: String?) {
        var info = stat()
        let inode: [UInt64]? = stat(path, &info) == 0 ? [UInt64(info.st_dev), UInt64(info.st_ino)] : nil
        var resolved: String?
        if let pointer = realpath(path, nil) {
            resolved = String(cString: pointer)
            free(pointer)
        }
        return (inode, resolved)
    }

    static func failure(_ what: String, errorNumber: Int32 = errno) -> CaptionError {
        let reason = String(cString: strerror(errorNumber))
        return CaptionError(
            "captions.write-failed", "\(what): \(reason) (errno \(errorNumber))",
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
    private var descriptor: Int32
    private var temporary: String
    /// Bytes written so far.
    private(set) var count = 0
    /// errno of the first failed write, if any.
    private var writeError: Int32?
    private var isCommitted = false

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
        guard let (descriptor, temporary) = Self.makeTemporary(directory: directory, base: base) else {
            throw CaptionFileWriter.failure("cannot create a temporary file in \(directory)")
        }
        self.descriptor = descriptor
        self.temporary = temporary
    }

    deinit {
        guard !isCommitted else { return }
        if descriptor >= 0 { _ = close(descriptor) }
        unlink(temporary)
    }

    /// A new file `DIRECTORY/.BASE.XXXXXX` (mkstemp(3) replaces the six X with a unique
    /// suffix), or nil.
    private static func makeTemporary(directory: String, base: String) -> (Int32, String)? {
        var template = Array("\(directory)/.\(base).XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let address = buffer.baseAddress else { return -1 }
            return mkstemp(address)
        }
        guard descriptor >= 0 else { return nil }
        let name = template.withUnsafeBufferPointer { buffer in
            String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return (descriptor, name)
    }

    /// Appends `bytes`; after a failure nothing more is written.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard writeError == nil else { return }
        if CaptionFileWriter.writeAll(bytes, to: descriptor) {
            count += bytes.count
        } else {
            writeError = errno
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
        if ftruncate(descriptor, 0) != 0 || lseek(descriptor, 0, SEEK_SET) != 0 {
            writeError = errno
            return
        }
        count = 0
    }

    /// Replaces the first `length` bytes written with `prefix`, keeping the rest: the rest is
    /// copied after `prefix` into a new temporary file, which takes this one's place.
    func replacePrefix(length: Int, with prefix: [UInt8]) {
        guard writeError == nil else { return }
        guard let (newDescriptor, newTemporary) = Self.makeTemporary(directory: directory, base: base) else {
            writeError = errno
            return
        }
        var copied = prefix.withUnsafeBytes { CaptionFileWriter.writeAll($0, to: newDescriptor) }
        let chunk = 1 << 20
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: chunk, alignment: 16)
        defer { buffer.deallocate() }
        var offset = length
        while copied, offset < count {
            let result = pread(descriptor, buffer, min(chunk, count - offset), off_t(offset))
            if result < 0, errno == EINTR { continue }
            guard result > 0 else {
                copied = false
                break
            }
            copied = CaptionFileWriter.writeAll(UnsafeRawBufferPointer(start: buffer, count: result), to: newDescriptor)
            offset += result
        }
        guard copied else {
            writeError = errno == 0 ? EIO : errno
            _ = close(newDescriptor)
            unlink(newTemporary)
            return
        }
        _ = close(descriptor)
        unlink(temporary)
        descriptor = newDescriptor
        temporary = newTemporary
        count = prefix.count + count - length
    }

    /// Flushes the file when it replaces one, makes it world-readable and renames it over
    /// the destination.
    ///
    /// - Throws: ``CaptionError`` `captions.write-failed`; the temporary file is removed.
    func commit() throws(CaptionError) {
        let written = writeError == nil
        // Replacing a file puts its old content at stake: flush the new one before the rename,
        // so a crash leaves one of the two whole. A new file replaces nothing; like any other
        // tool's output it reaches the disk when the system writes it back.
        var failedWith = writeError ?? 0
        var synced = written
        if written, isReplacing, fsync(descriptor) != 0 {
            synced = false
            failedWith = errno
        }
        // mkstemp creates the file 0600; caption files are meant to be served, so make them
        // world-readable like any other output. Failure here is not worth failing the write.
        _ = fchmod(descriptor, 0o644)
        let closed = close(descriptor) == 0
        if !closed, failedWith == 0 { failedWith = errno }
        descriptor = -1
        guard written, synced, closed else {
            throw CaptionFileWriter.failure("cannot write \(temporary)", errorNumber: failedWith)
        }
        guard rename(temporary, path) == 0 else {
            throw CaptionFileWriter.failure("cannot rename \(temporary) to \(path)")
        }
        isCommitted = true
    }
}
