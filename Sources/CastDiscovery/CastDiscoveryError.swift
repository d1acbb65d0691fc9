import SystemIO
public import CastModel

/// Why discovery could not start, or why it found nothing, as a ``Diagnostic`` with a fix.
///
/// Codes are stable (`discovery.*`), so a caller can match on them; the message says what was
/// observed and the fix says what to try.
public struct CastDiscoveryError: CodedError, Hashable {
    /// The finding, with its stable code, message and fix.
    public var diagnostic: Diagnostic

    /// Creates an error from a diagnostic.
    public init(_ diagnostic: Diagnostic) { self.diagnostic = diagnostic }

    /// The stable code, e.g. `discovery.nothing-answered`.
    public var code: DiagnosticCode { diagnostic.code }

    public var message: String { diagnostic.message }

    public var fix: String? { diagnostic.fix }

    /// A system call failed; `errno` is turned into text.
    static func system(_ call: String, errno code: Int32, context: String, fix: String) -> CastDiscoveryError {
        CastDiscoveryError(
            Diagnostic(
                .error, "discovery.socket-failed", "\(call) failed for \(context): \(errorText(code)) (errno \(code))",
                fix: fix))
    }
}

extension DiagnosticCode {
    /// getifaddrs failed or an interface name given by the caller does not exist.
    public static let discoveryInterface: DiagnosticCode = "discovery.interface"
    /// No interface is up, multicast-capable and addressed.
    public static let discoveryNoInterface: DiagnosticCode = "discovery.no-interface"
    /// Creating, binding or joining the mDNS socket failed.
    public static let discoverySocketFailed: DiagnosticCode = "discovery.socket-failed"
    /// Queries could not be sent on any interface (no multicast route, firewall rejecting output).
    public static let discoverySendFailed: DiagnosticCode = "discovery.send-failed"
    /// Not even this host's own queries came back: multicast does not work on these interfaces.
    public static let discoveryNoMulticast: DiagnosticCode = "discovery.no-multicast"
    /// Queries went out but no other host sent any mDNS packet.
    public static let discoveryNoMDNSTraffic: DiagnosticCode = "discovery.no-mdns-traffic"
    /// Other mDNS hosts answered, but no Cast device did.
    public static let discoveryNoCastDevice: DiagnosticCode = "discovery.no-cast-device"
}

/// `strerror` text for an errno value.
func errorText(_ code: Int32) -> String { SystemCallError.reason(errno: code) }
