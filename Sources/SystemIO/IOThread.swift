import Glibc
import Synchronization

/// A thread of the process's own: the one place that starts threads, names them and joins them.
///
/// Work that blocks (`poll`, a resolver, a library that joins its own threads) runs on one of
/// these instead of on Swift's cooperative pool, whose two threads here must never wait. Each
/// thread carries a name (`pthread_setname_np`, at most 15 bytes: longer names are cut), so
/// `top -H`, `gdb` and a crash report say which subsystem a thread belongs to.
///
/// ```swift
/// let loop = try IOThread.start(named: "cast-channel") { runLoop() }
/// loop.join()                                           // waits for runLoop to return
/// try IOThread.detach(named: "cast-resolve") { resolve() } // nobody waits for it
/// ```
public final class IOThread: Sendable {
    /// The name the thread was given (already cut to what the system keeps).
    public let name: String
    private let handle: Mutex<pthread_t?>

    private init(name: String, handle: pthread_t) {
        self.name = name
        self.handle = Mutex(handle)
    }

    /// A thread that nobody joined is detached, so its resources are freed when it ends.
    deinit {
        if let running = handle.withLock({ $0.take() }) { pthread_detach(running) }
    }

    /// Starts `body` on a new joinable thread named `name`.
    ///
    /// - Parameter stackSize: bytes of stack; nil for the system's default. Threads that only
    ///   make system calls need far less than the default 8 MiB.
    /// - Throws: ``SystemCallError`` when the thread cannot be created (the process reached
    ///   its thread limit, or memory is short).
    public static func start(
        named name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void
    ) throws(SystemCallError) -> IOThread {
        let name = systemName(name)
        let thread = try create(name: name, stackSize: stackSize, detached: false, body)
        return IOThread(name: name, handle: thread)
    }

    /// Starts `body` on a new detached thread named `name`: nobody waits for it to end.
    ///
    /// - Throws: ``SystemCallError`` when the thread cannot be created.
    public static func detach(
        named name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void
    ) throws(SystemCallError) {
        _ = try create(name: systemName(name), stackSize: stackSize, detached: true, body)
    }

    /// Waits until the thread's body has returned. Calling it again, or from several threads,
    /// returns at once after the first join. Never call it on the thread itself.
    public func join() {
        guard let running = handle.withLock({ $0.take() }) else { return }
        pthread_join(running, nil)
    }

    /// The calling thread's name as the system knows it ("" when it has none).
    public static var currentName: String {
        guard let getName = threadNaming.get else { return "" }
        var buffer = [CChar](repeating: 0, count: 16)
        guard getName(pthread_self(), &buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Blocks SIGPIPE on the calling thread only, so a write to a peer that has gone away
    /// fails with `EPIPE` instead of killing the process, without changing the process-wide
    /// disposition. A loop thread calls it first thing.
    public static func blockBrokenPipeSignal() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
    }

    /// Suspends the calling thread for `duration`: a loop's back-off
    /// after a transient failure, never a way to wait for another thread.
    public static func pause(for duration: Duration) {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || attoseconds > 0 else { return }
        var request = timespec(tv_sec: Int(clamping: seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, Glibc.errno == EINTR { request = remaining }
    }

    /// `name` cut to the 15 bytes Linux keeps, on a character boundary.
    static func systemName(_ name: String) -> String {
        var kept = ""
        for character in name {
            guard kept.utf8.count + character.utf8.count <= 15 else { break }
            kept.append(character)
        }
        return kept
    }

    private static func create(
        name: String, stackSize: Int?, detached: Bool, _ body: @escaping @Sendable () -> Void
    ) throws(SystemCallError) -> pthread_t {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if detached { pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED)) }
        if let stackSize {
            let status = pthread_attr_setstacksize(&attributes, max(stackSize, Int(PTHREAD_STACK_MIN)))
            guard status == 0 else { throw SystemCallError("pthread_attr_setstacksize", errno: status) }
        }
        let entry = Unmanaged.passRetained(ThreadEntry(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(
            &thread, &attributes,
            { raw in
                guard let raw else { return nil }
                let entry = Unmanaged<ThreadEntry>.fromOpaque(raw).takeRetainedValue()
                _ = threadNaming.set?(pthread_self(), entry.name)
                entry.body()
                return nil
            }, entry)
        guard status == 0 else {
            Unmanaged<ThreadEntry>.fromOpaque(entry).release()
            throw SystemCallError("pthread_create", errno: status)
        }
        return thread
    }
}

/// `pthread_setname_np` and `pthread_getname_np`, looked up once in the C library. They are
/// GNU extensions, which the Swift overlay of the C library does not declare; without them
/// (another C library) threads simply stay unnamed.
private let threadNaming: ThreadNaming = {
    typealias Set = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    typealias Get = @convention(c) (pthread_t, UnsafeMutablePointer<CChar>, Int) -> Int32
    let program = dlopen(nil, RTLD_NOW)
    let set = dlsym(program, "pthread_setname_np").map { unsafeBitCast($0, to: Set.self) }
    let get = dlsym(program, "pthread_getname_np").map { unsafeBitCast($0, to: Get.self) }
    return ThreadNaming(set: set, get: get)
}()

private struct ThreadNaming: Sendable {
    let set: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)?
    let get: (@convention(c) (pthread_t, UnsafeMutablePointer<CChar>, Int) -> Int32)?
}

/// What a new thread runs; passed through `pthread_create`'s context pointer.
private final class ThreadEntry: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
        self.name = name
        self.body = body
    }
}
