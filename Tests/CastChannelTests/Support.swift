import CastModel
import CastChannel
import Synchronization
import Testing

/// Reads a connection's messages in the background and remembers them and how the stream ended,
/// so tests can wait for either with a deadline instead of hanging on a missing message.
final class Inbox: Sendable {
    private struct State {
        var messages: [ChannelMessage] = []
        /// nil while open; `.success` after a normal end, `.failure` with the error otherwise.
        var ending: Result<Void, ChannelError>?
    }

    private let state = Shared(State())
    private let reader: Task<Void, Never>

    /// Starts reading; `onMessage` runs for each message after it is recorded.
    init(_ connection: CastChannelConnection, onMessage: (@Sendable (ChannelMessage) async -> Void)? = nil) {
        let state = self.state
        reader = Task {
            do {
                for try await message in connection.messages {
                    state.withLock { $0.messages.append(message) }
                    await onMessage?(message)
                }
                state.withLock { $0.ending = .success(()) }
            } catch let error as ChannelError {
                state.withLock { $0.ending = .failure(error) }
            } catch {
                state.withLock { $0.ending = .failure(ChannelError("test.unexpected", "\(error)")) }
            }
        }
    }

    var messages: [ChannelMessage] { state.withLock { $0.messages } }

    /// The messages not on the heartbeat namespace.
    var applicationMessages: [ChannelMessage] { messages.filter { $0.namespace != .heartbeat } }

    /// Waits until at least `count` messages match `filter`, and returns those.
    func wait(
        for count: Int, matching filter: @Sendable (ChannelMessage) -> Bool = { $0.namespace != .heartbeat },
        timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [ChannelMessage] {
        try await eventually(timeout: timeout, "\(count) messages", sourceLocation: sourceLocation) {
            self.messages.filter(filter).count >= count
        }
        return messages.filter(filter)
    }

    /// Waits for the stream to end; returns nil for a normal end, the error otherwise.
    func waitForEnd(timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async throws
        -> ChannelError?
    {
        try await eventually(timeout: timeout, "the message stream to end", sourceLocation: sourceLocation) {
            self.state.withLock { $0.ending != nil }
        }
        switch state.withLock({ $0.ending }) {
        case .failure(let error): return error
        default: return nil
        }
    }

    var hasEnded: Bool { state.withLock { $0.ending != nil } }
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Polls `condition` every 5 ms until it holds or `timeout` passes.
func eventually(
    timeout: Duration = .seconds(10), _ what: String, sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () -> Bool
) async throws {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while !condition() {
        guard ContinuousClock.now < deadline else {
            Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
            throw TimedOut(what: what)
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// A started loopback server and a task that collects the connections it accepts.
final class TestServer: Sendable {
    let server: CastChannelServer
    let port: Int
    private let accepted = Shared<[(connection: CastChannelConnection, inbox: Inbox)]>([])
    private let acceptor: Task<Void, Never>

    /// Starts a server; `onMessage` runs for each message any accepted connection receives.
    init(
        options: CastChannelServer.Options = .init(channel: .init(heartbeat: nil)),
        onMessage: (@Sendable (CastChannelConnection, ChannelMessage) async -> Void)? = nil
    ) throws {
        server = CastChannelServer(port: 0, bind: "127.0.0.1", options: options)
        port = try server.start()
        let server = self.server
        let accepted = self.accepted
        acceptor = Task {
            for await connection in server.connections {
                var perConnection: (@Sendable (ChannelMessage) async -> Void)?
                if let onMessage {
                    perConnection = { message in await onMessage(connection, message) }
                }
                let inbox = Inbox(connection, onMessage: perConnection)
                accepted.withLock { $0.append((connection, inbox)) }
            }
        }
    }

    var connections: [(connection: CastChannelConnection, inbox: Inbox)] { accepted.withLock { $0 } }

    /// Waits for the `index`th accepted connection.
    func connection(_ index: Int = 0, sourceLocation: SourceLocation = #_sourceLocation) async throws -> (
        connection: CastChannelConnection, inbox: Inbox
    ) {
        try await eventually("accepted connection \(index)", sourceLocation: sourceLocation) {
            self.connections.count > index
        }
        return connections[index]
    }

    func connect(options: ChannelOptions = .init(heartbeat: nil)) async throws -> (
        connection: CastChannelConnection, inbox: Inbox
    ) {
        let connection = try await CastChannelConnection.connect(
            host: "127.0.0.1", port: port, timeout: .seconds(10), options: options)
        return (connection, Inbox(connection))
    }

    func stop() async {
        await server.stop()
    }
}

/// A STRING message on a test namespace.
func testMessage(_ text: String, from source: String = "sender-0", to destination: String = "receiver-0")
    -> ChannelMessage
{
    ChannelMessage(
        sourceID: source, destinationID: destination, namespace: "urn:x-cast:com.castprep.test", payload: .string(text))
}

/// A mutex in a class, so closures and tasks can share it by reference.
final class Shared<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: Value) { mutex = Mutex(value) }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { mutex.withLock { body(&$0) } }
}
