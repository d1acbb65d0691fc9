import CastDiscovery
import CastModel
import SystemIO

/// A device address given by hand (`--host IP[:PORT]`): where to open the CASTV2 connection
/// without discovery.
///
/// Accepted forms: `192.168.1.20`, `192.168.1.20:8009`, `::1`, `[::1]:8009`,
/// `fe80::1%eth0`, `[fe80::1%eth0]:8009`, and host names (`tv.example`, `tv.example:8009`).
/// The port defaults to 8009, the Cast port of single devices; groups listen elsewhere.
///
/// ```swift
/// let address = try CastHostAddress(parsing: "[fe80::1%wlan0]:32219")
/// address.host          // "fe80::1%wlan0"
/// address.port          // 32219
/// address.description   // "[fe80::1%wlan0]:32219"
/// ```
public struct CastHostAddress: Sendable, Hashable, CustomStringConvertible {
    /// The port single Cast devices listen on.
    public static let defaultPort = 8009

    /// An IP address (IPv6 possibly with `%interface`) or a host name.
    public var host: String
    /// The CASTV2 TLS port, 1–65535.
    public var port: Int

    /// Creates an address from parts that are already valid.
    public init(host: String, port: Int = CastHostAddress.defaultPort) {
        self.host = host
        self.port = port
    }

    /// Parses `IP[:PORT]`, `[IPv6]:PORT`, bare IPv6, or `NAME[:PORT]`.
    ///
    /// - Throws: ``CastDeviceLocatorError`` with code `devices.host-invalid`, quoting the text
    ///   and saying which form is expected.
    public init(parsing text: String) throws(CastDeviceLocatorError) {
        func invalid(_ why: String) -> CastDeviceLocatorError {
            CastDeviceLocatorError(
                Diagnostic(
                    .error, .devicesHostInvalid, "'\(text.prefix(80))' is not a device address: \(why)",
                    fix:
                        "give an IP address with an optional port, e.g. --host 192.168.1.20, --host 192.168.1.20:8009 or --host [fe80::1%wlan0]:8009"
                ))
        }
        guard !text.isEmpty, text.utf8.count <= 300 else { throw invalid("it must have 1 to 300 characters") }
        guard !text.contains("/") else { throw invalid("give the address only, not a URL or a path") }
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw invalid("'[' without ']'") }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { throw invalid("expected ':PORT' after ']'") }
                portText = rest.dropFirst()
            }
            guard Self.isIPv6(host) else { throw invalid("'\(host)' inside brackets is not an IPv6 address") }
        } else if text.filter({ $0 == ":" }).count == 1, let colon = text.firstIndex(of: ":") {
            host = String(text[..<colon])
            portText = text[text.index(after: colon)...]
        } else if text.contains(":") {
            // Two or more colons: a bare IPv6 address, which cannot carry a port without brackets.
            guard Self.isIPv6(text) else {
                throw invalid("not an IPv6 address (one with a port must be written [ADDRESS]:PORT)")
            }
        }
        if !host.contains(":") {
            guard IPv4Address(host) != nil || Self.isHostName(host) else {
                throw invalid("'\(host)' is neither an IPv4 address nor a host name")
            }
        }
        var port = Self.defaultPort
        if let portText {
            guard let value = Int(portText), (1...65_535).contains(value), portText.allSatisfy(\.isASCII) else {
                throw invalid("the port must be a number from 1 to 65535")
            }
            port = value
        }
        self.init(host: host, port: port)
    }

    /// `host:port`, with brackets around IPv6 addresses.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The host as it goes into a URL authority: IPv6 in brackets, a zone's `%` escaped as `%25`.
    public var urlHost: String {
        guard host.contains(":") else { return host }
        return "[" + host.replacingPercent() + "]"
    }

    /// Whether `text` is an IPv6 address, with an optional `%zone` of interface-name characters.
    static func isIPv6(_ text: String) -> Bool {
        let parts = text.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        guard IPv6Address(String(parts[0])) != nil else { return false }
        guard parts.count == 2 else { return true }
        let zone = parts[1]
        return (1...15).contains(zone.utf8.count)
            && zone.utf8.allSatisfy { byte in
                byte.isASCIIAlphanumeric || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: ".")
            }
    }

    /// Whether `text` is a DNS host name: dot-separated labels of letters, digits and hyphens
    /// (RFC 1123), not starting or ending with a hyphen, at most 253 bytes.
    static func isHostName(_ text: String) -> Bool {
        guard (1...253).contains(text.utf8.count) else { return false }
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        // All-digit names are malformed IPv4 addresses (`192.168.1`), not names.
        if labels.allSatisfy({ $0.allSatisfy(\.isNumber) }) { return false }
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "-") }
        }
    }
}

extension UInt8 {
    fileprivate var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}

extension String {
    fileprivate func replacingPercent() -> String {
        var result = ""
        for character in self { result += character == "%" ? "%25" : String(character) }
        return result
    }
}
