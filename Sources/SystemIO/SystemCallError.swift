import Glibc
public import CodedErrors

/// A system call that failed, with the `errno` (or returned status) it reported.
///
/// The modules above turn it into their own coded errors, with this one as the ``cause``; its
/// ``message`` names the call and the C library's text for the number, e.g.
/// `pthread_create: Resource temporarily unavailable (errno 11)`.
public struct SystemCallError: CodedError, Hashable {
    /// The C function that failed, e.g. `pipe` or `pthread_create`.
    public let call: String
    /// The `errno` value (or the status a pthread function returned).
    public let errno: Int32

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
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

    /// `call: reason`, the form the modules quote inside their own messages.
    public var description: String { "\(call): \(reason)" }

    /// Always `system.call-failed`: the caller's own error says what could not be done.
    public var code: DiagnosticCode { "system.call-failed" }

    public var message: String { "\(call): \(reason) (errno \(errno))" }

    /// None here: only the caller knows what to try (another port, more file descriptors…).
    public var fix: String? { nil }
}
