import Synchronization

/// Messages from any thread to one loop thread, with a ``WakePipe`` that wakes the loop's
/// `poll` when there is something to take.
///
/// Only the first message after a ``take()`` writes to the pipe; later ones find a wake-up
/// already pending. ``close()`` refuses every later message, so a loop that has ended is
/// not posted to in vain.
///
/// ```swift
/// let mailbox = try Mailbox<Command>()
/// mailbox.post(.stop)                        // any thread
/// // loop thread: poll mailbox.wakeDescriptor with the sockets, then
/// for command in mailbox.take() { handle(command) }
/// ```
public final class Mailbox<Message: Sendable>: Sendable {
    private struct State {
        var messages: [Message] = []
        var wakePending = false
        var isClosed = false
    }

    private let state = Mutex(State())
    private let pipe: WakePipe

    /// - Throws: ``SystemCallError`` when the wake pipe cannot be created.
    public init() throws(SystemCallError) {
        pipe = try WakePipe()
    }

    /// The descriptor the loop polls for `POLLIN` alongside its own.
    public var wakeDescriptor: Int32 { pipe.readDescriptor }

    /// Queues `message` and wakes the loop; false (and nothing queued) once closed.
    @discardableResult
    public func post(_ message: Message) -> Bool {
        let needsWake = state.withLock { state -> Bool? in
            guard !state.isClosed else { return nil }
            state.messages.append(message)
            defer { state.wakePending = true }
            return !state.wakePending
        }
        guard let needsWake else { return false }
        if needsWake { pipe.wake() }
        return true
    }

    /// Every queued message, oldest first; called by the loop thread when ``wakeDescriptor``
    /// polled readable. The pipe is drained before the queue is taken, so a message posted
    /// meanwhile leaves a wake-up behind and none is ever stranded.
    public func take() -> [Message] {
        pipe.drain()
        return state.withLock { state in
            defer {
                state.messages.removeAll()
                state.wakePending = false
            }
            return state.messages
        }
    }

    /// Refuses later messages and returns the ones still queued, for the loop to answer.
    @discardableResult
    public func close() -> [Message] {
        state.withLock { state in
            state.isClosed = true
            defer { state.messages.removeAll() }
            return state.messages
        }
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { state.withLock { $0.isClosed } }
}
