import CastChannel
import CastModel
import Testing
import TestSupport

/// What the channel says when the address answers, but not as a Cast device.
@Suite("Peers that are not Cast devices")
struct ForeignPeerTests {
    @Test(
        "first bytes that cannot start a device's answer are named",
        arguments: [
            (Array("HTTP/1.0 400 Bad request\r\n".utf8), false, "answered HTTP (\"HTTP/1.0 400 Bad request\")"),
            (
                Array("HTTP/1.1 400 Bad Request\r\nServer: nginx".utf8), true,
                "answered HTTP (\"HTTP/1.1 400 Bad Request\")"
            ),
            (
                Array("<!DOCTYPE HTML>\n<html lang=\"en\">".utf8), false,
                "answered HTTP (an HTML page: \"<!DOCTYPE HTML>\")"
            ),
            (Array("SSH-2.0-OpenSSH_9.2p1\r\n".utf8), false, "answered with text (\"SSH-2.0-OpenSSH_9.2p1\")"),
            (
                [0xDE, 0xAD, 0xBE, 0xEF, 1, 2, 3, 4, 5], true,
                "answered with bytes that are not CASTV2 frames (de ad be ef 01 02 03 04…)"
            ),
            ([0x00, 0x07, 0x00], false, "answered with bytes that are not TLS (00 07 00…)"),
        ] as [([UInt8], Bool, String)])
    func foreign(bytes: [UInt8], insideTLS: Bool, description: String) {
        #expect(PeerIdentification.foreignProtocol(bytes, insideTLS: insideTLS) == description)
    }

    @Test(
        "what a device sends is not mistaken for another protocol",
        arguments: [
            ([0x16, 0x03, 0x03, 0x00, 0x7A], false),  // TLS handshake record
            ([0x15, 0x03, 0x03, 0x00, 0x02], false),  // TLS alert
            ([0x16], false),  // too short to tell
            ([0x00, 0x00, 0x01, 0x2C, 0x08, 0x00], true),  // a 300-byte CASTV2 frame
            ([0x00, 0x01, 0x00, 0x00], true),  // the largest frame, 64 KiB
            ([], true),
        ] as [([UInt8], Bool)])
    func castBytes(bytes: [UInt8], insideTLS: Bool) {
        #expect(PeerIdentification.foreignProtocol(bytes, insideTLS: insideTLS) == nil)
    }

    @Test(
        "connecting to a server that is not a Cast device fails with channel.not-cast-device",
        .requires(.python3, .openssl),
        arguments: [
            (ForeignServer.Kind.http, "answered HTTP (\"HTTP/1.1 400 Bad Request\"); this is not a Cast device's port"),
            (.banner, "answered with text (\"SSH-2.0-OpenSSH_9.2p1 Debian-2\")"),
            (.https, "accepted TLS but answered HTTP (\"HTTP/1.1 400 Bad Request\") instead of CASTV2"),
            (.tlsBinary, "accepted TLS but answered with bytes that are not CASTV2 frames (de ad be ef"),
        ])
    func foreignServer(kind: ForeignServer.Kind, phrase: String) async throws {
        let server = try await ForeignServer(kind)
        let error = await #expect(throws: ChannelError.self) {
            let connection = try await CastChannelConnection.connect(
                host: "127.0.0.1", port: server.port, timeout: .seconds(5))
            try await connection.send(ChannelMessage.connect(from: "sender-0", to: "receiver-0"))
            for try await _ in connection.messages {}
        }
        #expect(error?.code == ChannelError.Code.notCastDevice, "\(String(describing: error))")
        #expect(
            error?.message.contains("127.0.0.1:\(server.port) ") == true && error?.message.contains(phrase) == true,
            "\(String(describing: error))")
        #expect(error?.fix?.contains("8009") == true && error?.fix?.contains("castprep devices") == true)
    }

    @Test(
        "a server that accepts TCP and never answers the handshake is named as probably not a device",
        .requires(.python3, .openssl))
    func silentServer() async throws {
        let server = try await ForeignServer(.silent)
        let error = await #expect(throws: ChannelError.self) {
            _ = try await CastChannelConnection.connect(
                host: "127.0.0.1", port: server.port, timeout: .milliseconds(500))
        }
        #expect(error?.code == ChannelError.Code.connectTimeout)
        #expect(error?.message.contains("nothing answered the TLS handshake") == true, "\(String(describing: error))")
    }
}
