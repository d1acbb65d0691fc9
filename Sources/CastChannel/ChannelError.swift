public import CastModel

/// Why a Cast channel operation failed: a stable code, what happened with the numbers that
/// matter, and how to fix it.
///
/// The codec, the framer, TLS and the connections all throw this one type so a caller can
/// switch on ``code`` (for example to reconnect after ``Code/heartbeatTimeout`` but not after
/// ``Code/certificateMismatch``) without knowing which layer failed. Two errors with the same
/// code can differ in their message; compare codes, not errors.
public struct ChannelError: CodedError, Hashable {
    /// The stable identifier, such as `channel.frame-too-large`.
    public var code: DiagnosticCode
    /// What went wrong, with the offending values quoted.
    public var message: String
    /// What to do about it.
    public var fix: String?

    /// Creates an error.
    public init(_ code: DiagnosticCode, _ message: String, fix: String? = nil) {
        self.code = code
        self.message = message
        self.fix = fix
    }

    /// The error as an error-level ``Diagnostic`` for reports.
    public var diagnostic: Diagnostic { Diagnostic(self) }

    /// The stable codes of every ``ChannelError``.
    public enum Code {
        // MARK: Protobuf decoding
        /// The message ends inside a field.
        public static let truncated: DiagnosticCode = "channel.proto-truncated"
        /// A varint runs past 10 bytes.
        public static let varintTooLong: DiagnosticCode = "channel.proto-varint-too-long"
        /// A tag carries wire type 6 or 7, or a group end without its start.
        public static let wireTypeInvalid: DiagnosticCode = "channel.proto-wire-type-invalid"
        /// A tag carries field number 0 or one above 2^29 - 1.
        public static let fieldNumberInvalid: DiagnosticCode = "channel.proto-field-number-invalid"
        /// A CastMessage field arrives with a wire type its declaration does not allow.
        public static let wireTypeMismatch: DiagnosticCode = "channel.proto-wire-type-mismatch"
        /// A required CastMessage field is absent.
        public static let fieldMissing: DiagnosticCode = "channel.proto-field-missing"
        /// A string field is not valid UTF-8.
        public static let invalidUTF8: DiagnosticCode = "channel.proto-utf8-invalid"
        /// `payload_type` is neither STRING (0) nor BINARY (1).
        public static let payloadTypeUnknown: DiagnosticCode = "channel.proto-payload-type-unknown"
        /// The payload field that `payload_type` names is absent.
        public static let payloadMissing: DiagnosticCode = "channel.proto-payload-missing"
        /// The message is one chunk of a larger one (`continued` set), which CastPrep does not reassemble.
        public static let chunkedUnsupported: DiagnosticCode = "channel.proto-chunked-unsupported"
        /// Groups are nested deeper than the decoder follows.
        public static let nestingTooDeep: DiagnosticCode = "channel.proto-nesting-too-deep"

        // MARK: Framing and messages
        /// A frame's length prefix or an outgoing message exceeds 64 KiB.
        public static let frameTooLarge: DiagnosticCode = "channel.frame-too-large"
        /// The stream ended in the middle of a frame.
        public static let frameTruncated: DiagnosticCode = "channel.frame-truncated"
        /// An outgoing message has an empty source, destination or namespace.
        public static let messageInvalid: DiagnosticCode = "channel.message-invalid"

        // MARK: Connecting
        /// The host name could not be resolved.
        public static let resolveFailed: DiagnosticCode = "channel.resolve-failed"
        /// No TCP connection could be made to any address of the host.
        public static let connectFailed: DiagnosticCode = "channel.connect-failed"
        /// Connecting (resolution, TCP and TLS together) took longer than allowed.
        public static let connectTimeout: DiagnosticCode = "channel.connect-timeout"
        /// The address answered, but not as a Cast device: plain HTTP, HTTPS, text or other
        /// bytes that are neither TLS nor CASTV2 frames (see ``PeerIdentification``).
        public static let notCastDevice: DiagnosticCode = "channel.not-cast-device"
        /// The TLS handshake failed.
        public static let handshakeFailed: DiagnosticCode = "channel.tls-handshake-failed"
        /// The device's certificate is not the one the caller pinned.
        public static let certificateMismatch: DiagnosticCode = "channel.certificate-mismatch"
        /// The emulator's certificate could not be made or loaded.
        public static let certificateFailed: DiagnosticCode = "channel.certificate-failed"
        /// The listening socket could not be created, bound or put into listening mode.
        public static let bindFailed: DiagnosticCode = "channel.bind-failed"
        /// The event loop thread or its wake-up descriptor could not be created.
        public static let eventLoopFailed: DiagnosticCode = "channel.event-loop-failed"
        /// The task waiting for the operation was cancelled.
        public static let cancelled: DiagnosticCode = "channel.cancelled"

        // MARK: An open link
        /// The peer closed the connection.
        public static let peerClosed: DiagnosticCode = "channel.peer-closed"
        /// Reading or writing the socket or the TLS session failed.
        public static let ioFailed: DiagnosticCode = "channel.io-failed"
        /// The peer stopped answering PINGs: the link is dead.
        public static let heartbeatTimeout: DiagnosticCode = "channel.heartbeat-timeout"
        /// More bytes are waiting to be sent than the outbound limit allows.
        public static let outboundQueueFull: DiagnosticCode = "channel.outbound-queue-full"
        /// The consumer of ``CastChannelConnection/messages`` fell too far behind.
        public static let inboundOverflow: DiagnosticCode = "channel.inbound-overflow"
        /// The connection was closed locally before or while the operation ran.
        public static let closed: DiagnosticCode = "channel.closed"
    }
}
