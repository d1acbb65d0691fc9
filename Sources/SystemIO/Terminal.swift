import Glibc
import Synchronization

// MARK: - Crash restore

/// The signals that end the process abnormally and must still give the terminal back.
private let crashSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGTRAP]

/// What the crash handler restores, allocated once and written before the handler is armed:
/// a signal handler can neither take a lock nor allocate, so it only reads these.
nonisolated(unsafe) private let crashSavedMode: UnsafeMutablePointer<termios> = {
    let pointer = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    pointer.initialize(to: termios())
    return pointer
}()
nonisolated(unsafe) private let crashPreviousActions: UnsafeMutablePointer<sigaction> = {
    let pointer = UnsafeMutablePointer<sigaction>.allocate(capacity: 6)
    pointer.initialize(repeating: sigaction(), count: 6)
    return pointer
}()
/// The longest leave sequence the crash handler writes.
private let crashLeaveCapacity = 64
nonisolated(unsafe) private let crashLeaveBytes: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 64)
    pointer.initialize(repeating: 0, count: 64)
    return pointer
}()
private let crashLeaveCount = Atomic<Int>(0)
private let crashDescriptor = Atomic<Int32>(-1)

/// Restores the saved mode and the leave sequence, puts back the handler that was there
/// before (the Swift runtime's backtracer, or the default) and raises the signal again.
/// Only async-signal-safe calls: tcsetattr, write, sigaction, raise.
private func crashRestoreHandler(_ number: Int32) {
    let descriptor = crashDescriptor.exchange(-1, ordering: .sequentiallyConsistent)
    if descriptor >= 0 {
        _ = tcsetattr(descriptor, TCSANOW, crashSavedMode)
        _ = write(descriptor, crashLeaveBytes, crashLeaveCount.load(ordering: .sequentiallyConsistent))
    }
    for index in 0..<crashSignals.count where crashSignals[index] == number {
        sigaction(number, crashPreviousActions + index, nil)
    }
    raise(number)
}

/// A terminal in raw mode (keys arrive one by one, no echo, Ctrl-C as a byte) that is put back
/// as it was on every way out: ``restore()`` on a normal exit or SIGINT/SIGTERM (the caller's
/// ``TerminationSignal``), and a crash-signal handler for SIGSEGV, SIGBUS, SIGILL, SIGFPE,
/// SIGABRT and SIGTRAP (Swift's traps), which restores the mode and writes the leave sequence
/// before the process dies.
///
/// ```swift
/// let terminal = try TerminalSession.enter(enter: "\u{1B}[?1049h", leave: "\u{1B}[?1049l")
/// defer { terminal.restore() }
/// ```
public final class TerminalSession: Sendable {
    public let input: Int32
    public let output: Int32
    private let saved: termios
    private let leave: String
    private let isRestored = Atomic<Bool>(false)

    private init(input: Int32, output: Int32, saved: termios, leave: String) {
        self.input = input
        self.output = output
        self.saved = saved
        self.leave = leave
    }

    /// Puts `input` into raw mode, writes `enter` to `output`, and arms the crash handler.
    ///
    /// Output processing stays on, so "\n" still returns the carriage. One session at a time.
    /// - Throws: ``SystemCallError`` when `input` is not a terminal (`tcgetattr`).
    public static func enter(input: Int32 = 0, output: Int32 = 1, enter: String, leave: String) throws(SystemCallError)
        -> TerminalSession
    {
        var mode = termios()
        guard tcgetattr(input, &mode) == 0 else { throw SystemCallError("tcgetattr", errno: errno) }
        let saved = mode
        mode.c_iflag &= ~tcflag_t(IXON | ICRNL | BRKINT | INPCK | ISTRIP)
        mode.c_lflag &= ~tcflag_t(ECHO | ICANON | ISIG | IEXTEN)
        mode.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &mode.c_cc) { bytes in
            bytes[Int(VMIN)] = 1
            bytes[Int(VTIME)] = 0
        }
        guard tcsetattr(input, TCSADRAIN, &mode) == 0 else { throw SystemCallError("tcsetattr", errno: errno) }
        let session = TerminalSession(input: input, output: output, saved: saved, leave: leave)
        session.armCrashHandler()
        session.write(enter)
        return session
    }

    private func armCrashHandler() {
        crashSavedMode.pointee = saved
        let bytes = Array(leave.utf8.prefix(crashLeaveCapacity))
        for (index, byte) in bytes.enumerated() { crashLeaveBytes[index] = byte }
        crashLeaveCount.store(bytes.count, ordering: .sequentiallyConsistent)
        for (index, number) in crashSignals.enumerated() {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { crashRestoreHandler($0) }
            sigemptyset(&action.sa_mask)
            action.sa_flags = Int32(SA_NODEFER)
            sigaction(number, &action, crashPreviousActions + index)
        }
        crashDescriptor.store(input, ordering: .sequentiallyConsistent)
    }

    /// Writes `text` to the terminal, all of it (retrying short writes and EINTR).
    public func write(_ text: String) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.write(output, base + offset, raw.count - offset)
            }
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR || errno == EAGAIN {
                continue
            } else {
                return
            }
        }
    }

    /// Writes the leave sequence and puts the saved mode back; later calls do nothing.
    public func restore() {
        guard !isRestored.exchange(true, ordering: .sequentiallyConsistent) else { return }
        crashDescriptor.store(-1, ordering: .sequentiallyConsistent)
        write(leave)
        var mode = saved
        _ = tcsetattr(input, TCSADRAIN, &mode)
        for (index, number) in crashSignals.enumerated() {
            sigaction(number, crashPreviousActions + index, nil)
        }
    }

    /// Columns and rows of the terminal on `descriptor`; nil when it is not one.
    public static func size(of descriptor: Int32 = 1) -> (columns: Int, rows: Int)? {
        var size = winsize()
        guard ioctl(descriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0, size.ws_row > 0 else { return nil }
        return (Int(size.ws_col), Int(size.ws_row))
    }

    /// Whether `descriptor` (standard input unless given) is a terminal.
    public static func isTerminal(_ descriptor: Int32 = 0) -> Bool { isatty(descriptor) == 1 }

    /// `SIGTERM`, `SIGINT`, or `signal N`: how a stop is reported.
    public static func signalName(_ number: Int32) -> String {
        switch number {
        case SIGTERM: "SIGTERM"
        case SIGINT: "SIGINT"
        case SIGHUP: "SIGHUP"
        default: "signal \(number)"
        }
    }
}

/// Reads a terminal's key bytes on a thread of its own (`terminal-keys`) and hands each chunk
/// to a callback, until ``stop()`` or the end of input.
///
/// The thread polls the terminal and a ``WakePipe``; an escape sequence split across reads is
/// given 20 ms to complete, so arrows are not mistaken for Escape.
public final class TerminalKeyReader: Sendable {
    private let wake: WakePipe
    private let thread: IOThread

    private init(wake: WakePipe, thread: IOThread) {
        self.wake = wake
        self.thread = thread
    }

    /// Starts reading `descriptor`; `onBytes` gets each chunk, `onEnd` is called once when the input ends.
    public static func start(
        descriptor: Int32 = 0, onBytes: @escaping @Sendable ([UInt8]) -> Void,
        onEnd: @escaping @Sendable () -> Void
    ) throws(SystemCallError) -> TerminalKeyReader {
        let wake = try WakePipe()
        let thread = try IOThread.start(named: "terminal-keys", stackSize: 1 << 17) {
            var descriptors = [
                pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wake.readDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            var buffer = [UInt8](repeating: 0, count: 512)
            while true {
                descriptors[0].revents = 0
                descriptors[1].revents = 0
                let ready = poll(&descriptors, 2, -1)
                if ready < 0, errno == EINTR { continue }
                if ready < 0 || descriptors[1].revents != 0 { return }
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                guard count > 0 else {
                    onEnd()
                    return
                }
                var chunk = Array(buffer[0..<count])
                if chunk.suffix(4).contains(0x1B) {
                    var more = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                    if poll(&more, 1, 20) > 0 {
                        let extra = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                        if extra > 0 { chunk += buffer[0..<extra] }
                    }
                }
                onBytes(chunk)
            }
        }
        return TerminalKeyReader(wake: wake, thread: thread)
    }

    /// Stops the thread and waits for it.
    public func stop() {
        wake.wake()
        thread.join()
    }
}
