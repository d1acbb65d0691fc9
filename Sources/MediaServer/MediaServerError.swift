public import CastModel
internal import CMicroHTTPD
import Glibc

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
        MediaServerError("serve.directory-missing", "cannot serve '\(path)': \(reason)",
                         fix: "give an existing directory")
    }

    static func badAddress(_ address: String, role: String) -> MediaServerError {
        MediaServerError("serve.address-invalid", "'\(address)' is not an IPv4 or IPv6 address (\(role))",
                         fix: "write a numeric address such as 192.168.1.20 or ::1")
    }

    static func badMount(_ prefix: String) -> MediaServerError {
        MediaServerError("serve.mount-invalid", "the URL prefix '\(prefix)' must start with '/' and contain no '.' or '..' segment",
                         fix: "use a prefix such as / or /captions")
    }

    /// The stable code for a libmicrohttpd that cannot be loaded.
    public static let libraryMissingCode: DiagnosticCode = "serve.microhttpd-missing"

    static func libraryMissing(_ reason: String) -> MediaServerError {
        MediaServerError(libraryMissingCode, "\(reason); the server cannot start",
                         fix: "install libmicrohttpd: apt-get install \(CASTPREP_MICROHTTPD_PACKAGE)")
    }

    static func listenFailed(_ address: String, port: UInt16, call: String, errno code: Int32) -> MediaServerError {
        let reason = SystemError.text(code)
        let fix: String = switch code {
        case EADDRINUSE: "another program uses port \(port); pick another with --port, or --port 0 for any free one"
        case EADDRNOTAVAIL: "\(address) is not an address of this machine; use one listed by 'ip addr', or leave --bind out"
        case EACCES: "ports below 1024 need privileges; use a port such as 8000"
        default: "check the address and port"
        }
        return MediaServerError("serve.listen-failed", "cannot listen on \(address) port \(port): \(call) failed: \(reason) (errno: \(code))", fix: fix)
    }
}

/// Text for C `errno` values.
enum SystemError {
    /// The C library's message for `code`, e.g. "Address already in use".
    static func text(_ code: Int32) -> String {
        guard let message = strerror(code) else { return "error \(code)" }
        return String(cString: message)
    }
}
