/// Tells from the first bytes a server sent whether it is something other than a Cast device,
/// so a wrong address or port is reported as that instead of as a broken frame or handshake.
///
/// A Cast device answers a TLS ClientHello with a TLS record (content type 0x14–0x18, version
/// major 3), and inside TLS every CASTV2 frame starts with a 4-byte big-endian length of at
/// most 64 KiB (so `00 00` or `00 01 00 00`). Anything else comes from another kind of server:
/// a plain HTTP server answers the ClientHello with `HTTP/1.x 400`, an HTTPS server answers the
/// first CASTV2 frame with `HTTP/1.1 400` inside TLS (whose length prefix would read
/// 1,213,486,160 bytes), an SSH server greets with `SSH-2.0-…`.
///
/// ```swift
/// PeerIdentification.foreignProtocol(Array("HTTP/1.0 400 Bad request\r\n".utf8), insideTLS: false)
/// // "answered HTTP (\"HTTP/1.0 400 Bad request\")"
/// ```
public enum PeerIdentification {
    /// How many leading bytes the loop keeps to identify a peer.
    public static let sampleSize = 64

    /// A description of the protocol `bytes` belong to when they cannot be the start of what a
    /// Cast device sends, else nil (too few bytes to tell, or bytes a device could send).
    /// - Parameters:
    ///   - bytes: the first bytes the peer sent: raw TCP bytes before the handshake, decrypted
    ///     bytes once TLS is up.
    ///   - insideTLS: whether the bytes came through an established TLS session.
    public static func foreignProtocol(_ bytes: [UInt8], insideTLS: Bool) -> String? {
        guard let first = bytes.first else { return nil }
        if bytes.starts(with: Array("HTTP/".utf8)) {
            return "answered HTTP (\"\(firstLine(of: bytes))\")"
        }
        // An HTTP/0.9-style answer is the body alone: Python's http.server answers a request
        // line it cannot parse with its error page and no status line.
        let start = String(decoding: bytes.prefix(16), as: UTF8.self).lowercased()
        if start.hasPrefix("<!doctype html") || start.hasPrefix("<html") {
            return "answered HTTP (an HTML page: \"\(firstLine(of: bytes))\")"
        }
        if insideTLS {
            // A CASTV2 length prefix is at most 65,536: its first byte is 0 and the second 0 or 1.
            guard first != 0 || (bytes.count > 1 && bytes[1] > 1) else { return nil }
        } else {
            // A TLS record: content type 20–24, then protocol version major 3.
            let isRecordType = (0x14...0x18).contains(first)
            guard !isRecordType || (bytes.count > 1 && bytes[1] != 3) else { return nil }
        }
        if isText(bytes) {
            return "answered with text (\"\(firstLine(of: bytes))\")"
        }
        let hex = bytes.prefix(8).map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined(separator: " ")
        return insideTLS
            ? "answered with bytes that are not CASTV2 frames (\(hex)…)"
            : "answered with bytes that are not TLS (\(hex)…)"
    }

    /// The error for a peer identified by ``foreignProtocol(_:insideTLS:)``.
    static func error(peer: String, description: String, insideTLS: Bool) -> ChannelError {
        let what = insideTLS ? "\(peer) accepted TLS but \(description) instead of CASTV2" : "\(peer) \(description)"
        return ChannelError(
            ChannelError.Code.notCastDevice, "\(what); this is not a Cast device's port",
            fix:
                "Cast devices speak CASTV2 over TLS on port 8009 (a speaker group on a port of its own): check the address and port; `castprep devices` lists the devices that answer"
        )
    }

    /// The first line, printable characters only, at most 60 of them.
    static func firstLine(of bytes: [UInt8]) -> String {
        let line = bytes.prefix { $0 != 0x0D && $0 != 0x0A }.prefix(60)
        return String(line.map { (0x20..<0x7F).contains($0) ? Character(Unicode.Scalar($0)) : "?" })
    }

    /// Whether the bytes up to the first line break are printable ASCII.
    static func isText(_ bytes: [UInt8]) -> Bool {
        let line = bytes.prefix { $0 != 0x0D && $0 != 0x0A }
        return line.count >= 3 && line.allSatisfy { (0x20..<0x7F).contains($0) || $0 == 0x09 }
    }
}
