public import CastModel
internal import CMicroHTTPD
import SystemIO

/// Why the server could not start or a setting is unusable, with a stable code and a fix.
public struct MediaServerError: CodedError, Hashable {
    /// The stable identifier, `serve.*`.
    public var code: DiagnosticCode
    /// What went wrong, with the offending value.
    public var message: String
    /// How to fix it.
    public var fix: String?

    /// Creates an error.
    public init(_ code: DiagnosticCode, _ message: String, fix: String? = nil) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// The error as a diagnostic.
    public var diagnostic: Diagnostic { Diagnostic(self) }

    static func directoryMissing(_ path: String, reason: String) -> MediaServerError {
        MediaServerError(
            "serve.directory-missing", "cannot serve '\(path)': \(reason)",
            fix: "give an existing directory")
    }

    static func badAddress(_ address: String, role: String) -> MediaServerError {
        MediaServerError(
            "serve.address-invalid", "'\(address)' is not an IPv4 or IPv6 address (\(role))",
            fix: "write a numeric address such as 192.168.1.20 or ::1")
    }

    static func badMount(_ prefix: String) -> MediaServerError {
        MediaServerError(
            "serve.mount-invalid", "the URL prefix '\(prefix)' must start with '/' and contain no '.' or '..' segment",
            fix: "use a prefix such as / or /captions")
    }

    /// The stable code for a libmicrohttpd that cannot be loaded.
    public static let libraryMissingCode: DiagnosticCode = "serve.microhttpd-missing"

    static func libraryMissing(_ reason: String) -> MediaServerError {
        MediaServerError(
            libraryMissingCode, "\(reason); the server cannot start",
            fix: "install libmicrohttpd: apt-get install \(CASTPREP_MICROHTTPD_PACKAGE)")
    }

    static func listenFailed(_ address: String, port: UInt16, _ error: SystemCallError) -> MediaServerError {
        let fix =
            if error.isAddressInUse {
                "another program uses port \(port); pick another with --port, or --port 0 for any free one"
            } else if error.isAddressNotAvailable {
                "\(address) is not an address of this machine; use one listed by 'ip addr', or leave --bind out"
            } else if error.isPermissionDenied {
                "ports below 1024 need privileges; use a port such as 8000"
            } else {
                "check the address and port"
            }
        return MediaServerError(
            "serve.listen-failed",
            "cannot listen on \(address) port \(port): \(error.call) failed: \(error.reason) (errno: \(error.errno))",
            fix: fix)
    }
}
