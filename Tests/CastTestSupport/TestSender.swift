public import CastChannel
public import CastModel
public import JSONSupport
import Synchronization

/// A minimal Cast sender for tests against the emulator: one TLS connection, every message it
/// receives kept in order, how the link ended, and waits with deadlines instead of hangs.
public final class TestSender: Sendable {
    private struct State {
        var messages: [ChannelMessage] = []
        /// nil while open; `.success` after a normal end, `.failure` with the error otherwise.
        var ending: Result<Void, ChannelError>?
        var nextRequestID = 1
    }

    public let link: CastChannelConnection
    /// The sender's endpoint id (pychromecast and go-chromecast use `sender-0` for everything).
    public let sourceID: String
    private let box = StateBox()
    private let reader: Task<Void, Never>

    /// The state, in a class so the reading task can share it by reference.
    private final class StateBox: Sendable {
        let state = Mutex(State())
    }

    /// Connects to `host:port`; `options` default to no heartbeat of our own.
    public static func connect(
        host: String = "127.0.0.1", port: Int, sourceID: String = "sender-0",
        options: ChannelOptions = ChannelOptions(heartbeat: nil)
    ) async throws -> TestSender {
        let link = try await CastChannelConnection.connect(
            host: host, port: port, timeout: .seconds(10), options: options)
        return TestSender(link: link, sourceID: sourceID)
    }

    init(link: CastChannelConnection, sourceID: String) {
        self.link = link
        self.sourceID = sourceID
        reader = Task { [box] in
            do {
                for try await message in link.messages {
                    box.state.withLock { $0.messages.append(message) }
                }
                box.state.withLock { $0.ending = .success(()) }
            } catch let error as ChannelError {
                box.state.withLock { $0.ending = .failure(error) }
            } catch {
                box.state.withLock { $0.ending = .failure(ChannelError("test.unexpected", "\(error)")) }
            }
        }
    }

    deinit { reader.cancel() }

    /// Every message received so far, heartbeats included when the channel delivers them.
    public var messages: [ChannelMessage] { box.state.withLock { $0.messages } }

    /// Whether the link has ended.
    public var hasEnded: Bool { box.state.withLock { $0.ending != nil } }

    /// Sends CONNECT to `destination`.
    public func connect(to destination: String) async throws {
        try await link.openVirtualConnection(to: destination, from: sourceID)
    }

    /// Sends `payload` to `destination`; adds a fresh `requestId` unless `withRequestID` is false
    /// and returns the id used (0 when none).
    @discardableResult
    public func send(
        _ payload: JSONValue, to destination: String, namespace: CastNamespace, withRequestID: Bool = true
    ) async throws -> Int {
        var payload = payload
        var requestID = 0
        if withRequestID, case .object(var members) = payload {
            requestID = box.state.withLock { state in
                defer { state.nextRequestID += 1 }
                return state.nextRequestID
            }
            members["requestId"] = JSONValue(requestID)
            payload = .object(members)
        }
        try await link.send(
            ChannelMessage(sourceID: sourceID, destinationID: destination, namespace: namespace, json: payload))
        return requestID
    }

    /// Waits for the first message (from the start of the link) that `predicate` accepts.
    public func waitFor(
        _ what: String, timeout: Duration = .seconds(10), _ predicate: @Sendable (ChannelMessage) -> Bool
    ) async throws -> ChannelMessage {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            if let found = messages.first(where: predicate) { return found }
            guard ContinuousClock.now < deadline, !hasEnded || messages.contains(where: predicate) else {
                throw TestSenderTimeout(what: what, received: messages.map(\.description))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Waits for the reply to `requestID`.
    public func reply(to requestID: Int, timeout: Duration = .seconds(10)) async throws -> ChannelMessage {
        try await waitFor("the reply to request \(requestID)", timeout: timeout) {
            $0.payloadJSON?["requestId"]?.intValue == requestID
        }
    }

    /// Waits for the link to end; returns nil for a normal end, the error otherwise.
    public func waitForEnd(timeout: Duration = .seconds(10)) async throws -> ChannelError? {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while !hasEnded {
            guard ContinuousClock.now < deadline else {
                throw TestSenderTimeout(what: "the link to end", received: messages.map(\.description))
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        switch box.state.withLock({ $0.ending }) {
        case .failure(let error): return error
        default: return nil
        }
    }

    /// Closes the link.
    public func close() async { await link.close() }
}

/// A wait that ran out, with what had arrived, so a failing test says what it saw.
public struct TestSenderTimeout: Error, CustomStringConvertible {
    public var what: String
    public var received: [String]
    public var description: String {
        "timed out waiting for \(what); received \(received.count) messages:\n"
            + received.suffix(20).joined(separator: "\n")
    }
}
