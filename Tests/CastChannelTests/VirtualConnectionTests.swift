import CastModel
import JSONSupport
import Testing

@testable import CastChannel

@Suite("Virtual connection bookkeeping")
struct VirtualConnectionTests {
    static let pychromecastConnect = ChannelMessage(
        sourceID: "sender-0", destinationID: "receiver-0", namespace: .connection,
        payload: .string(
            #"{"type":"CONNECT","origin":{},"userAgent":"PyChromecast","senderInfo":{"sdkType":2,"version":"15.605.1.3","browserVersion":"44.0.2403.30","platform":4,"systemVersion":"Macintosh; Intel Mac OS X10_10_3","connectionType":1}}"#
        ))

    @Test("CONNECT opens a pair, a repeat changes nothing, CLOSE from either end ends it")
    func connectAndClose() {
        var registry = VirtualConnectionRegistry()
        let pair = VirtualConnection(sourceID: "sender-0", destinationID: "receiver-0")
        guard case .opened(let opened, let request) = registry.record(Self.pychromecastConnect) else {
            Issue.record("CONNECT did not open")
            return
        }
        #expect(opened == pair)
        #expect(request.userAgent == "PyChromecast")
        #expect(request.senderInfo?.platform == 4)
        #expect(request.senderInfo?.systemVersion == "Macintosh; Intel Mac OS X10_10_3")
        #expect(registry.isOpen(between: "sender-0", and: "receiver-0"))
        #expect(registry.isOpen(between: "receiver-0", and: "sender-0"))
        if case .alreadyOpen = registry.record(Self.pychromecastConnect) {
        } else {
            Issue.record("repeat CONNECT not reported")
        }
        #expect(registry.connections.count == 1)

        // The device closes the pair from its side (an app stopped).
        let fromDevice = ChannelMessage.close(from: "receiver-0", to: "sender-0", reasonCode: nil)
        #expect(registry.record(fromDevice) == .closed(pair, reasonCode: nil))
        #expect(registry.connections.isEmpty)
        #expect(registry.record(ChannelMessage.close(to: "receiver-0")) == .closedUnknown(pair))
    }

    @Test("a sender's own CLOSE carries Chromium's reason code 5")
    func closeReason() {
        var registry = VirtualConnectionRegistry()
        registry.record(.connect(to: "web-5"))
        #expect(
            registry.record(.close(to: "web-5"))
                == .closed(VirtualConnection(sourceID: "sender-0", destinationID: "web-5"), reasonCode: 5))
    }

    @Test("sources connected to an endpoint are the senders its broadcasts reach")
    func subscribers() {
        var registry = VirtualConnectionRegistry()
        for sender in ["sender-0", "client-42", "client-7"] {
            registry.record(.connect(from: sender, to: "transport-1"))
        }
        registry.record(.connect(from: "client-42", to: "receiver-0"))
        #expect(registry.sources(connectedTo: "transport-1") == ["client-42", "client-7", "sender-0"])
        #expect(registry.sources(connectedTo: "receiver-0") == ["client-42"])
    }

    @Test("CONNECT to the broadcast id and beyond the limit is refused")
    func refusals() {
        var registry = VirtualConnectionRegistry(limit: 2)
        if case .refused = registry.record(.connect(to: "*")) {} else { Issue.record("broadcast CONNECT accepted") }
        registry.record(.connect(to: "a"))
        registry.record(.connect(to: "b"))
        guard case .refused(_, let error) = registry.record(.connect(to: "c")) else {
            Issue.record("third CONNECT accepted")
            return
        }
        #expect(error.code == ChannelError.Code.messageInvalid)
        #expect(registry.connections.count == 2)
    }

    @Test("other namespaces, other types and broken payloads")
    func otherMessages() {
        var registry = VirtualConnectionRegistry()
        #expect(registry.record(pingMessage) == nil)
        let connected = ChannelMessage(
            sourceID: "receiver-0", destinationID: "sender-0", namespace: .connection,
            json: ["type": "CONNECTED", "protocolVersion": 3])
        #expect(registry.record(connected) == .ignored(type: "CONNECTED"))
        for payload: ChannelMessage.Payload in [.string("not json"), .string("[1]"), .binary([1, 2])] {
            let message = ChannelMessage(sourceID: "s", destinationID: "d", namespace: .connection, payload: payload)
            guard case .invalid(let error) = registry.record(message) else {
                Issue.record("\(payload) accepted")
                continue
            }
            #expect(error.code == ChannelError.Code.messageInvalid)
        }
        #expect(registry.connections.isEmpty)
    }

    @Test("CastPrep's CONNECT has the fields Chromium sends, and reads back")
    func castPrepConnect() throws {
        let message = ChannelMessage.connect(to: "receiver-0")
        let json = try #require(message.payloadJSON)
        #expect(json["type"] == "CONNECT")
        #expect(json["connType"] == 0)
        #expect(json["origin"] == .object([:]))
        #expect(json["senderInfo"]?["sdkType"] == 2)
        #expect(json["senderInfo"]?["platform"] == 6)
        #expect(json["senderInfo"]?["connectionType"] == 1)
        #expect(json["protocolVersionList"] == nil)
        #expect(ConnectRequest(json: json) == .castPrep)

        let openscreen = ConnectRequest(json: [
            "type": "CONNECT", "protocolVersion": 2, "protocolVersionList": [0, 1, 2, 3, 2],
        ])
        #expect(openscreen.protocolVersions == [2, 0, 1, 3])
        #expect(ConnectRequest(json: openscreen.jsonValue).protocolVersions == [2, 0, 1, 3])
    }
}

@Suite("TLS identity")
struct TLSIdentityTests {
    @Test("a self-signed certificate lives 3 days (plus a minute of skew), under the 4 senders accept")
    func selfSigned() throws {
        let identity = try TLSIdentity.selfSigned()
        #expect(identity.certificate.lifetimeSeconds == 3 * 86_400 + 60)
        #expect(identity.certificate.sha256.count == 32)
        #expect(identity.certificate.fingerprint.count == 32 * 3 - 1)
        #expect(identity.certificate.fingerprint.allSatisfy { $0 == ":" || $0.isHexDigit && !$0.isLowercase })
        #expect(try TLSIdentity.selfSigned().certificate != identity.certificate)
        let reloaded = try TLSIdentity(
            certificateDER: identity.certificate.derBytes, privateKeyDER: identity.privateKeyDER)
        #expect(reloaded == identity)
    }

    @Test("a key that does not match the certificate, and a non-positive validity, are refused")
    func refusals() throws {
        let first = try TLSIdentity.selfSigned()
        let second = try TLSIdentity.selfSigned()
        let mismatch = #expect(throws: ChannelError.self) {
            try TLSIdentity(certificateDER: first.certificate.derBytes, privateKeyDER: second.privateKeyDER)
        }
        #expect(mismatch?.code == ChannelError.Code.certificateFailed)
        let garbage = #expect(throws: ChannelError.self) {
            try TLSIdentity(certificateDER: [1, 2, 3], privateKeyDER: [4])
        }
        #expect(garbage?.code == ChannelError.Code.certificateFailed)
        let negative = #expect(throws: ChannelError.self) { try TLSIdentity.selfSigned(validity: .seconds(-5)) }
        #expect(negative?.code == ChannelError.Code.certificateFailed)
        #expect(ChannelCertificate(derBytes: [0xFF]).lifetimeSeconds == nil)
    }
}
