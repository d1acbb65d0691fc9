import Glibc

/// A system call that failed, with the `errno` (or returned status) it reported.
///
/// The modules above turn it into their own coded errors; ``description`` names the call and
/// the C library's text for the number, e.g. `pthread_create: Resource temporarily unavailable`.
public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The C function that failed, e.g. `pipe` or `pthread_create`.
    public let call: String
    /// The `errno` value (or the status a pthread function returned).
    public let errno: Int32

    public init(_ call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The C library's text for ``errno``.
    public var reason: String {
        guard let text = strerror(errno) else { return "error \(errno)" }
        return String(cString: text)
    }

    public var description: String { "\(call): \(reason)" }
}
