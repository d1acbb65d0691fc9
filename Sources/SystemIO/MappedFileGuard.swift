import Glibc
import Synchronization

/// Turns the `SIGBUS` of a mapped file that another program truncated into an error that says
/// so. A read of a mapped page past the file's new end faults; the process would die with
/// "Bus error" and no hint. The handler checks the fault address against the watched mappings
/// and, for one of them, writes that file's prepared message to standard error and exits with
/// status 1; any other `SIGBUS` is handed to the handler that was there before.
///
/// A handler may neither allocate nor take a lock, so each slot's message is written when the
/// mapping is watched, and the handler only reads atomics and calls `write` and `_exit`.
enum MappedFileGuard {
    /// One watched mapping: its address range and the message for it.
    final class Slot: Sendable {
        let start = Atomic<UInt>(0)
        let end = Atomic<UInt>(0)
        let length = Atomic<Int>(0)
        let isTaken = Atomic<Bool>(false)
        nonisolated(unsafe) let message = UnsafeMutablePointer<UInt8>.allocate(capacity: messageCapacity)
    }

    static let messageCapacity = 1024
    /// More mappings at once than any command makes (a run maps its one catalog); a mapping
    /// made while all are taken is simply not watched.
    static let slots: [Slot] = (0..<8).map { _ in Slot() }
    nonisolated(unsafe) static let previousAction: UnsafeMutablePointer<sigaction> = {
        let pointer = UnsafeMutablePointer<sigaction>.allocate(capacity: 1)
        pointer.initialize(to: sigaction())
        return pointer
    }()

    /// Installs the handler once, after everything it reads exists.
    private static let installation: Void = {
        _ = slots
        _ = previousAction
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = { number, info, _ in
            let address = UInt(bitPattern: info?.pointee._sifields._sigfault.si_addr)
            for slot in MappedFileGuard.slots {
                let start = slot.start.load(ordering: .acquiring)
                guard start != 0, address >= start, address < slot.end.load(ordering: .acquiring) else { continue }
                _ = write(2, slot.message, slot.length.load(ordering: .acquiring))
                _exit(1)
            }
            // Not a watched mapping: put back the previous handler; returning runs the faulting
            // access again, which then gets it.
            sigaction(number, MappedFileGuard.previousAction, nil)
        }
        action.sa_flags = SA_SIGINFO
        sigemptyset(&action.sa_mask)
        sigaction(SIGBUS, &action, previousAction)
    }()

    /// Watches `count` bytes mapped at `base` from the file at `path`; returns the slot to
    /// hand to ``release(_:)`` before the memory is unmapped, or nil when none was free.
    static func watch(_ base: UnsafeRawPointer, count: Int, path: String) -> Int? {
        _ = installation
        guard
            let index = slots.firstIndex(where: {
                $0.isTaken.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
            })
        else {
            return nil
        }
        let slot = slots[index]
        let text = Array(
            """
            \(path): error: [input.truncated-while-read] the file became shorter while castprep read it: another \
            program truncated or rewrote it in place
                fix: run again once the file is written; a program that updates the file should write a new file \
            and rename it over the old one, which an open reader never sees

            """.utf8.prefix(messageCapacity))
        text.withUnsafeBufferPointer { slot.message.update(from: $0.baseAddress!, count: $0.count) }
        slot.length.store(text.count, ordering: .releasing)
        slot.end.store(UInt(bitPattern: base) + UInt(count), ordering: .releasing)
        slot.start.store(UInt(bitPattern: base), ordering: .releasing)
        return index
    }

    /// Stops watching the slot ``watch(_:count:path:)`` returned.
    static func release(_ index: Int) {
        let slot = slots[index]
        slot.start.store(0, ordering: .releasing)
        slot.isTaken.store(false, ordering: .releasing)
    }
}
