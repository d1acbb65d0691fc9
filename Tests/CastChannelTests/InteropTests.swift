import CastModel
import Foundation
import JSONSupport
import Testing
import TestSupport

@testable import CastChannel

/// Runs Scripts/interop/channel_pb.py, which uses pychromecast's generated CastMessage protobuf
/// (the code pychromecast itself sends with) and Python's ssl module. Skipped without
/// pychromecast (pip install pychromecast; Scripts/bootstrap installs it).
enum ChannelInterop {
    static let script = Repository.root().appendingPathComponent("Scripts/interop/channel_pb.py").path

    /// Runs the script without blocking a cooperative thread: the exit is awaited through the
    /// termination handler, and the output is read after it.
    static func run(_ arguments: [String], input: String = "") async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script] + arguments
        let output = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardInput = stdin
        let collected = Shared<[UInt8]>([])
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            collected.withLock { $0.append(contentsOf: data) }
        }
        let status = try await withCheckedThrowingContinuation {
            (continuation: CheckedContinuation<Int32, any Error>) in
            process.terminationHandler = { process in continuation.resume(returning: process.terminationStatus) }
            do {
                try process.run()
                stdin.fileHandleForWriting.write(Data(input.utf8))
                try stdin.fileHandleForWriting.close()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
            }
        }
        output.fileHandleForReading.readabilityHandler = nil
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        collected.withLock { $0.append(contentsOf: rest) }
        return (status, String(decoding: collected.withLock { $0 }, as: UTF8.self))
    }

    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static func spec(_ message: ChannelMessage) -> JSONValue {
        var members: [String: JSONValue] = [
            "source": .string(message.sourceID), "destination": .string(message.destinationID),
            "namespace": .string(message.namespace.rawValue),
        ]
        switch message.payload {
        case .string(let text): members["text"] = .string(text)
        case .binary(let bytes): members["binary"] = .string(hex(bytes))
        }
        return .object(members)
    }

    static let messages: [ChannelMessage] = [
        pingMessage,
        .connect(to: "receiver-0"),
        ChannelMessage(
            sourceID: "client-8841", destinationID: "8c3f6a3e-2c4f-4a8e-9d52-0c2b7f1e9a10", namespace: .media,
            payload: .string(
                #"{"type":"LOAD","media":{"contentId":"https://cdn.example/é.mp4","metadata":{"title":"日本語 🎬"}},"requestId":3}"#
            )),
        ChannelMessage(
            sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth,
            payload: .binary([0x0A, 0x04, 0x12, 0x02, 0xAB, 0xCD])),
        ChannelMessage(
            sourceID: "s", destinationID: "d", namespace: "n", payload: .string(String(repeating: "long ", count: 5000))
        ),
        ChannelMessage(sourceID: "s", destinationID: "*", namespace: .receiver, payload: .string("")),
    ]
}

@Suite("Interop with pychromecast's protobuf", .requires(.pychromecast))
struct ChannelInteropTests {
    @Test("pychromecast serializes every message to exactly our bytes")
    func encodingAgrees() async throws {
        let input = JSONWriter.compact.string(from: .array(ChannelInterop.messages.map(ChannelInterop.spec)))
        let result = try await ChannelInterop.run(["encode"], input: input)
        #expect(result.status == 0)
        let theirs = result.output.split(separator: "\n").map(String.init)
        #expect(theirs == ChannelInterop.messages.map { ChannelInterop.hex($0.protobufEncoded()) })
        for (line, message) in zip(theirs, ChannelInterop.messages) {
            var bytes: [UInt8] = []
            var index = line.startIndex
            while index < line.endIndex, let next = line.index(index, offsetBy: 2, limitedBy: line.endIndex) {
                bytes.append(UInt8(line[index..<next], radix: 16) ?? 0)
                index = next
            }
            #expect(try ChannelMessage(protobuf: bytes) == message)
        }
    }

    @Test("pychromecast parses our bytes to the same fields")
    func decodingAgrees() async throws {
        let input = ChannelInterop.messages.map { ChannelInterop.hex($0.protobufEncoded()) }.joined(separator: "\n")
        let result = try await ChannelInterop.run(["decode"], input: input)
        #expect(result.status == 0)
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.count == ChannelInterop.messages.count)
        for (line, message) in zip(lines, ChannelInterop.messages) {
            let parsed = try JSONParser().parse(line).value
            var expected = ChannelInterop.spec(message)
            if case .object(var members) = expected {
                members["version"] = 0
                expected = .object(members)
            }
            #expect(parsed == expected)
        }
    }

    @Test("a Python ssl sender with pychromecast's framing talks to our TLS server")
    func pythonSenderAgainstServer() async throws {
        let server = try TestServer { connection, message in
            guard message.payloadType == "GET_STATUS" else { return }
            try? await connection.send(
                ChannelMessage(
                    sourceID: "receiver-0", destinationID: message.sourceID, namespace: .receiver,
                    json: [
                        "type": "RECEIVER_STATUS", "requestId": 1, "status": ["volume": ["level": 1, "muted": false]],
                    ]))
        }
        let result = try await ChannelInterop.run(["client", String(server.port)])
        #expect(result.status == 0, "\(result.output)")
        let received = try result.output.split(separator: "\n").map { try JSONParser().parse(String($0)).value }
        #expect(
            received.contains([
                "source": "receiver-0", "destination": "sender-0", "namespace": .string(heartbeatNamespace),
                "text": #"{"type":"PONG"}"#, "version": 0,
            ]))
        #expect(received.contains { $0["text"]?.stringValue?.contains("RECEIVER_STATUS") == true })

        let accepted = try await server.connection()
        let messages = try await accepted.inbox.wait(for: 2)
        #expect(messages.map(\.payloadType) == ["CONNECT", "GET_STATUS"])
        guard case .opened(_, let request)? = VirtualConnectionRegistry().recordingCopy(messages[0]) else {
            Issue.record("the CONNECT did not read as one")
            return
        }
        #expect(request.userAgent == "PyChromecast")
        #expect(try await accepted.inbox.waitForEnd()?.code == ChannelError.Code.peerClosed)
        await server.stop()
    }
}

extension VirtualConnectionRegistry {
    /// What recording `message` into a copy would report.
    func recordingCopy(_ message: ChannelMessage) -> Event? {
        var copy = self
        return copy.record(message)
    }
}
