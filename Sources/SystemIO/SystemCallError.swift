import Glibc
public import CodedErrors

/// A system call that failed, with the `errno` (or returned status) it reported.
///
/// The modules above turn it into their own coded errors, with this one as the ``cause``; its
/// ``message`` names the call and the C library's text for the number, e.g.
/// `pthread_create: Resource temporarily unavailable (errno 11)`. A call on a file also names
/// the path, `open out/report.json: Permission denied (errno 13)`, so that an error read far
/// from the call still says which of several files it was about.
public struct SystemCallError: CodedError, Hashable {
    /// The C function that failed, e.g. `pipe` or `pthread_create`.
    public let call: String
    /// The `errno` value (or the status a pthread function returned).
    public let errno: Int32
    /// The file the call was about, when it was about one (`open`, `write`, `renameat2`…).
    public let path: String?

    public init(_ call: String, errno: Int32, path: String? = nil) {
        self.call = call
        self.errno = errno
        self.path = path
    }

    /// The C library's text for ``errno``.
    public var reason: String { Self.reason(errno: errno) }

    /// The C library's text for an `errno` value, e.g. `No such file or directory` for
    /// `ENOENT`; `error N` for a number it does not know.
    public static func reason(errno number: Int32) -> String {
        guard let text = strerror(number) else { return "error \(number)" }
        return String(cString: text)
    }

    /// Whether the call found nothing at the path it was given (`ENOENT`).
    public var isNotFound: Bool { errno == ENOENT }

    /// Whether another socket holds the address (`EADDRINUSE`, from `bind`).
    public var isAddressInUse: Bool { errno == EADDRINUSE }

    /// Whether the address is not one of this machine's (`EADDRNOTAVAIL`, from `bind`).
    public var isAddressNotAvailable: Bool { errno == EADDRNOTAVAIL }

    /// Whether the call was not permitted (`EACCES`: a privileged port, a file's mode).
    public var isPermissionDenied: Bool { errno == EACCES }

    /// Whether the peer reset the connection or had gone away (`ECONNRESET`, `EPIPE`).
    public var isConnectionReset: Bool { errno == ECONNRESET || errno == EPIPE }

    /// Whether the address family is not supported by the socket (`EAFNOSUPPORT`).
    public var isFamilyUnsupported: Bool { errno == EAFNOSUPPORT }

    /// `ECONNREFUSED` from `call`: for a connection that ended before it was established
    /// without the system giving a reason.
    public static func connectionRefused(_ call: String) -> SystemCallError {
        SystemCallError(call, errno: ECONNREFUSED)
    }

    /// `EIO`, for a call that ended short without the system giving a reason.
    public static let inputOutputErrorNumber: Int32 = EIO

    /// The calling thread's `errno` right now, for a library (OpenSSL, libmicrohttpd) that
    /// reports a system call's failure without the number. Read it at once after the call.
    public static var lastErrorNumber: Int32 { Glibc.errno }

    /// `call: reason` (`call path: reason` for a call on a file), the form the modules quote
    /// inside their own messages. Unlike other coded errors it leaves out the code: it is only
    /// ever a cause, and the error around it has one.
    public var description: String { "\(subject): \(reason)" }

    /// The call, and the path it was about.
    private var subject: String { path.map { "\(call) \($0)" } ?? call }

    /// Always `system.call-failed`: the caller's own error says what could not be done.
    public var code: DiagnosticCode { "system.call-failed" }

    public var message: String { "\(subject): \(reason) (errno \(errno))" }

    /// None here: only the caller knows what to try (another port, more file descriptors…).
    public var fix: String? { nil }
}
