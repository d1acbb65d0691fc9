import CastModel
import CastSender
import Synchronization

/// Thrown into the sender's incoming stream when a test drops the link.
struct LinkDropped: Error, CustomStringConvertible {
    var description: String { "link dropped by the test" }
}

/// Thrown by `send` on a link that is already closed.
struct LinkClosed: Error, CustomStringConvertible {
    var description: String { "the link is closed" }
}

/// One in-memory connection between a sender and a ``ScriptedDevice``: what the sender
/// sends goes to the device, what the device delivers comes out of `incoming`.
final class InMemoryLink: CastSenderTransport {
    let incoming: AsyncThrowingStream<SenderMessage, any Error>
    private let continuation: AsyncThrowingStream<SenderMessage, any Error>.Continuation
    private let device: ScriptedDevice
    /// 1 for the first link the device accepted, 2 for the first reconnect…
    let number: Int
    private let open = Mutex(true)

    init(device: ScriptedDevice, number: Int) {
        (incoming, continuation) = AsyncThrowingStream.makeStream(of: SenderMessage.self)
        self.device = device
        self.number = number
    }

    var isOpen: Bool { open.withLock { $0 } }

    func send(_ message: SenderMessage) async throws {
        guard isOpen else { throw LinkClosed() }
        await device.receive(message, on: self)
    }

    func connectVirtual(to destinationID: String, from sourceID: String) async throws {
        guard isOpen else { throw LinkClosed() }
        await device.virtualConnection(.connect, from: sourceID, to: destinationID, on: self)
    }

    func closeVirtual(to destinationID: String, from sourceID: String) async throws {
        guard isOpen else { throw LinkClosed() }
        await device.virtualConnection(.close, from: sourceID, to: destinationID, on: self)
    }

    func close() async {
        guard
            open.withLock({ state in
                defer { state = false }
                return state
            })
        else { return }
        continuation.finish()
    }

    /// Hands a message from the device to the sender.
    func deliver(_ message: SenderMessage) {
        guard isOpen else { return }
        continuation.yield(message)
    }

    /// Kills the link as a network failure would: the sender's stream throws.
    func drop() {
        guard
            open.withLock({ state in
                defer { state = false }
                return state
            })
        else { return }
        continuation.finish(throwing: LinkDropped())
    }
}

/// Opens links to one device; the device can refuse a number of attempts.
struct DeviceLinkFactory: CastSenderTransportFactory {
    let device: ScriptedDevice

    func makeTransport(to endpoint: CastEndpoint) async throws -> any CastSenderTransport {
        try await device.openLink()
    }
}
