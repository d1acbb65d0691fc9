import CastModel
import Synchronization
import SystemIO

/// The output folder's lock: one preflight run at a time per folder. Two runs into one folder
/// would write the same `.partial` files and rename each other's halves into place.
///
/// An exclusive `flock(2)` on `.castprep-lock` inside the folder, held until the value is
/// released (the kernel drops it when the process ends, however it ends). The holder writes
/// its process id into the file, so a second run can say which process has the folder. Its
/// methods block (file system calls): call them through ``BlockingWork``.
final class OutputLock: Sendable {
    /// The lock file's name inside the output folder.
    static let fileName = ".castprep-lock"

    private let lock: ProcessLockFile

    private init(lock: ProcessLockFile) {
        self.lock = lock
    }

    /// Takes the lock on `folder` (which must exist) without waiting.
    ///
    /// - Throws: `preflight.output-in-use` when another process holds it, naming that
    ///   process; `preflight.output-not-writable` when the lock file cannot be opened.
    static func acquire(folder: String) throws(PreflightError) -> OutputLock {
        let path = folder + "/" + fileName
        let attempt: ProcessLockFile.Attempt
        do {
            attempt = try ProcessLockFile.acquire(at: path)
        } catch {
            throw PreflightError(
                code: "preflight.output-not-writable",
                message: "cannot \(error.call == "flock" ? "lock" : "open") \(path): \(error.reason)",
                fix: "choose another folder with -o DIR")
        }
        switch attempt {
        case .acquired(let lock):
            return OutputLock(lock: lock)
        case .held(let holder):
            throw PreflightError(
                code: "preflight.output-in-use",
                message:
                    "\(folder) is in use by another castprep preflight (\(holder.map { "process \($0)" } ?? "a process that has not written its id yet"))",
                fix: "wait for that run to finish, or write the outputs to another folder with -o DIR")
        }
    }
}

/// Which files in the output folder preflight wrote, so a run replaces only those:
/// `.castprep-manifest` lists each file's path (relative to the folder), size and
/// modification time as preflight left it. A file in the way that is not listed, or that
/// changed since (someone else wrote it), is refused instead of overwritten.
///
/// Nothing is read back or flushed per file: a refusal costs one `lstat`, a record one
/// `stat`, and the manifest is written once at the end of the run (``save()``), through a
/// partial file renamed into place. A cached rerun, which writes no caption or poster, only
/// records the five report files. Blocking: call through ``BlockingWork``.
final class OutputManifest: Sendable {
    /// The manifest's name inside the output folder.
    static let fileName = ".castprep-manifest"
    /// Larger manifests are not read (then every file in the way is refused).
    static let maximumBytes = 64 << 20
    private static let header = "castprep-manifest 1"

    /// A file as preflight left it.
    struct Stamp: Hashable {
        var size: Int64
        var seconds: Int64
        var nanoseconds: Int64

        init(size: Int64, seconds: Int64, nanoseconds: Int64) {
            self.size = size
            self.seconds = seconds
            self.nanoseconds = nanoseconds
        }

        init(_ status: FileSystem.Status) {
            self.init(
                size: status.size, seconds: status.modificationSeconds, nanoseconds: status.modificationNanoseconds)
        }
    }

    private struct State {
        var entries: [String: Stamp]
        var isChanged = false
    }

    let folder: String
    private let state: Mutex<State>

    private init(folder: String, entries: [String: Stamp]) {
        self.folder = folder
        state = Mutex(State(entries: entries))
    }

    /// Reads the folder's manifest; an empty one when there is none (a fresh folder) or it
    /// cannot be read.
    static func load(folder: String) -> OutputManifest {
        OutputManifest(folder: folder, entries: entries(at: folder + "/" + fileName))
    }

    /// The entries of a manifest file; lines that do not parse are skipped.
    static func entries(at path: String) -> [String: Stamp] {
        guard let bytes = try? FileSystem.readFile(at: path, limit: maximumBytes, followingSymbolicLinks: false) else {
            return [:]
        }
        return parse(bytes[...])
    }

    /// Parses `castprep-manifest 1` followed by `SIZE SECONDS.NANOSECONDS PATH` lines.
    static func parse(_ bytes: ArraySlice<UInt8>) -> [String: Stamp] {
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: true)[...]
        guard let first = lines.popFirst(), String(decoding: first, as: UTF8.self) == header else { return [:] }
        var entries: [String: Stamp] = [:]
        for line in lines {
            let fields = line.split(separator: 0x20, maxSplits: 2, omittingEmptySubsequences: false)
            guard fields.count == 3, let size = Int64(String(decoding: fields[0], as: UTF8.self)), size >= 0 else {
                continue
            }
            let time = fields[1].split(separator: 0x2E, omittingEmptySubsequences: false)
            guard time.count == 2, let seconds = Int64(String(decoding: time[0], as: UTF8.self)),
                let nanoseconds = Int64(String(decoding: time[1], as: UTF8.self)),
                (0..<1_000_000_000).contains(nanoseconds)
            else { continue }
            let path = String(decoding: fields[2], as: UTF8.self)
            guard isSafe(path) else { continue }
            entries[path] = Stamp(size: size, seconds: seconds, nanoseconds: nanoseconds)
        }
        return entries
    }

    /// A relative path inside the folder: no leading `/`, no `..` component, no control byte.
    static func isSafe(_ path: String) -> Bool {
        !path.isEmpty && !path.hasPrefix("/") && !path.split(separator: "/").contains("..")
            && !path.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// Whether preflight may write `relative`: nothing is there, or the file there is one
    /// preflight wrote and nobody changed since. A symbolic link or a folder in the way is
    /// never replaced.
    func mayReplace(_ relative: String) -> Bool {
        let status: FileSystem.Status
        do {
            status = try FileSystem.status(of: folder + "/" + relative, followingSymbolicLinks: false)
        } catch {
            return error.isNotFound
        }
        guard status.kind == .regular else { return false }
        return state.withLock { $0.entries[relative] } == Stamp(status)
    }

    /// Notes that preflight has just written `relative`.
    func record(_ relative: String) {
        guard let status = try? FileSystem.status(of: folder + "/" + relative, followingSymbolicLinks: false),
            status.kind == .regular
        else { return }
        let stamp = Stamp(status)
        state.withLock { state in
            if state.entries.updateValue(stamp, forKey: relative) != stamp { state.isChanged = true }
        }
    }

    /// The refusal for a file in the way: `preflight.output-not-ours`.
    func refusal(_ relative: String) -> (message: String, fix: String) {
        (
            "\(folder)/\(relative) is in the way and castprep preflight did not write it (it is not in \(folder)/\(Self.fileName), or it changed since)",
            "write the outputs to another folder with -o DIR, or move or remove \(folder)/\(relative) if it is not needed"
        )
    }

    /// The error that stops a run before anything is written.
    func refusalError(_ relative: String) -> PreflightError {
        let (message, fix) = refusal(relative)
        return PreflightError(code: Self.notOursCode, message: message, fix: fix)
    }

    /// The code of a refused file.
    static let notOursCode: DiagnosticCode = "preflight.output-not-ours"

    /// Writes the manifest when something was recorded; returns why it could not, or nil.
    @discardableResult
    func save() -> String? {
        let text: String? = state.withLock { state in
            guard state.isChanged else { return nil }
            state.isChanged = false
            var text = Self.header + "\n"
            for (path, stamp) in state.entries.sorted(by: { $0.key < $1.key }) {
                text += "\(stamp.size) \(stamp.seconds).\(stamp.nanoseconds) \(path)\n"
            }
            return text
        }
        guard let text else { return nil }
        let path = folder + "/" + Self.fileName
        let partial = path + ".partial"
        do {
            try FileSystem.writeAtomically(Array(text.utf8), to: path, through: partial)
        } catch {
            return error.call == "open" ? "cannot write \(partial): \(error.reason)" : "cannot write \(path)"
        }
        return nil
    }
}
