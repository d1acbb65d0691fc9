import Synchronization
import SystemIO

/// Work done once per local file in a run, shared by every item that names the same file:
/// a library whose items are hard links of a few files, or the same file under several
/// entries, is probed once per file, not once per item.
///
/// Keyed by what makes the answer the same: the file (device and inode, after symbolic
/// links), its size and modification time (a file rewritten during the run is a new key) and
/// the extension of the name it is read under (the probe names the container from it). The
/// first item to ask does the work; items asking meanwhile wait for that answer instead of
/// starting their own. Only the last ``capacity`` files are kept, so memory stays flat over
/// a library of any size. Remote URLs are never shared: two URLs with the same validators can
/// still serve different bytes.
final class LocalFileMemo<Value: Sendable>: Sendable {
    /// The answer for a key, and whether this caller computed it.
    struct Answer: Sendable {
        var value: Value
        var isOwn: Bool
    }

    private struct State {
        var tasks: [LocalFileKey: Task<Value, Never>] = [:]
        /// Keys in the order they were added, oldest first, from `head`.
        var order: [LocalFileKey] = []
        var head = 0
    }

    private let state = Mutex(State())
    /// How many files are remembered at most.
    let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The value for `key`: computed by `work` for the first caller, the same value for every
    /// later one (while the key is remembered).
    func value(for key: LocalFileKey, work: @escaping @Sendable () async -> Value) async -> Answer {
        let (task, isOwn) = state.withLock { state -> (Task<Value, Never>, Bool) in
            if let task = state.tasks[key] { return (task, false) }
            let task = Task { await work() }
            state.tasks[key] = task
            state.order.append(key)
            if state.tasks.count > capacity {
                // Callers already waiting keep their task; only the lookup is forgotten.
                state.tasks[state.order[state.head]] = nil
                state.head += 1
                if state.head >= capacity {
                    state.order.removeFirst(state.head)
                    state.head = 0
                }
            }
            return (task, true)
        }
        return Answer(value: await task.value, isOwn: isOwn)
    }

    /// How many files are remembered now.
    var count: Int { state.withLock { $0.tasks.count } }
}

/// What identifies a local file's bytes and the name's extension.
struct LocalFileKey: Sendable, Hashable {
    var identity: FileIdentity
    var size: Int64
    var modificationSeconds: Int64
    var modificationNanoseconds: Int64
    var fileExtension: String

    /// The key of the file at `path`; nil when it cannot be read (the caller does the
    /// work itself and reports what is wrong). Blocks on the disk: call off the
    /// cooperative pool.
    init?(path: String) {
        guard let status = try? FileSystem.status(of: path), status.kind == .regular else { return nil }
        identity = status.identity
        size = status.size
        modificationSeconds = status.modificationSeconds
        modificationNanoseconds = status.modificationNanoseconds
        let name = path.split(separator: "/").last ?? ""
        let parts = name.split(separator: ".")
        fileExtension = parts.count > 1 ? (parts.last.map { $0.lowercased() } ?? "") : ""
    }
}
