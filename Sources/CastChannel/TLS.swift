internal import COpenSSL
internal import Hashing

/// A certificate as DER bytes with its SHA-256 fingerprint.
///
/// Cast devices present a self-signed certificate that nobody in open source verifies;
/// official senders bind it to the device through deviceauth instead, whose signature covers
/// these DER bytes. Exposing the bytes and fingerprint lets a caller log, pin or bind it.
public struct ChannelCertificate: Sendable, Hashable, CustomStringConvertible {
    /// The certificate, DER-encoded.
    public let derBytes: [UInt8]
    /// SHA-256 over ``derBytes``.
    public let sha256: [UInt8]

    /// Wraps DER bytes, computing the fingerprint.
    public init(derBytes: [UInt8]) {
        self.derBytes = derBytes
        self.sha256 = SHA256Digest.hash(derBytes) ?? []
    }

    /// Seconds from the certificate's notBefore to its notAfter, or nil when the bytes do not
    /// parse. Official senders refuse a device certificate valid for more than four days
    /// (``TLSIdentity/maximumDeviceValidity``).
    public var lifetimeSeconds: Int? {
        derBytes.withUnsafeBufferPointer { buffer -> Int? in
            var cursor = buffer.baseAddress
            guard let certificate = castprep_d2i_X509(nil, &cursor, buffer.count) else {
                castprep_ERR_clear_error()
                return nil
            }
            defer { castprep_X509_free(certificate) }
            var days: Int32 = 0
            var seconds: Int32 = 0
            guard
                castprep_ASN1_TIME_diff(
                    &days, &seconds, castprep_X509_get0_notBefore(certificate), castprep_X509_get0_notAfter(certificate)
                ) == 1
            else {
                return nil
            }
            return Int(days) * 86_400 + Int(seconds)
        }
    }

    /// The fingerprint as `openssl x509 -fingerprint -sha256` prints it: `AB:CD:…`.
    public var fingerprint: String {
        sha256.map { byte in
            let digits = Array("0123456789ABCDEF")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }.joined(separator: ":")
    }

    public var description: String { "certificate SHA-256 \(fingerprint)" }
}

/// A TLS server identity: a certificate and its private key, both DER.
///
/// The receiver emulator makes its own, as devices do: a short-lived self-signed EC P-256
/// certificate generated in memory. Official senders reject device certificates valid for more
/// than four days, so the default lifetime is three, like openscreen's test receiver.
public struct TLSIdentity: Sendable, Hashable {
    /// The certificate.
    public let certificate: ChannelCertificate
    /// The private key, DER (SEC1 for EC keys, PKCS#1 for RSA; both load).
    public let privateKeyDER: [UInt8]

    /// Wraps an existing certificate and key.
    /// - Throws: ``ChannelError/Code/certificateFailed`` when the bytes do not load or the key
    ///   does not match the certificate.
    public init(certificateDER: [UInt8], privateKeyDER: [UInt8]) throws(ChannelError) {
        self.certificate = ChannelCertificate(derBytes: certificateDER)
        self.privateKeyDER = privateKeyDER
        let context = try TLSContexts.makeServerContext(self)
        castprep_SSL_CTX_free(context)
    }

    private init(uncheckedCertificateDER: [UInt8], privateKeyDER: [UInt8]) {
        self.certificate = ChannelCertificate(derBytes: uncheckedCertificateDER)
        self.privateKeyDER = privateKeyDER
    }

    /// The longest lifetime official senders accept for a device's TLS certificate.
    public static let maximumDeviceValidity: Duration = .seconds(4 * 24 * 3600)

    /// Generates a self-signed EC P-256 certificate with `commonName`, valid from one minute ago
    /// (to tolerate clock skew) for `validity`. Takes about a millisecond.
    /// - Throws: ``ChannelError/Code/certificateFailed`` when OpenSSL fails or `validity` is
    ///   not positive.
    public static func selfSigned(
        commonName: String = "CastPrep Receiver", validity: Duration = .seconds(3 * 24 * 3600)
    ) throws(ChannelError) -> TLSIdentity {
        let seconds = validity.components.seconds
        guard seconds > 0 else {
            throw ChannelError(
                ChannelError.Code.certificateFailed, "a certificate validity of \(validity) is not positive",
                fix: "pass a validity of at least one second; devices use up to four days")
        }
        OpenSSLSetup.ensure()
        guard let key = castprep_EVP_EC_gen("P-256") else { throw OpenSSLErrors.failure("generating a P-256 key") }
        defer { castprep_EVP_PKEY_free(key) }
        guard let certificate = castprep_X509_new() else { throw OpenSSLErrors.failure("allocating a certificate") }
        defer { castprep_X509_free(certificate) }
        var generator = SystemRandomNumberGenerator()
        let serial = generator.next() >> 1
        let commonNameBytes = Array(commonName.utf8)
        guard castprep_X509_set_version(certificate, Int(X509_VERSION_3)) == 1,
            castprep_ASN1_INTEGER_set_uint64(castprep_X509_get_serialNumber(certificate), serial) == 1,
            castprep_X509_gmtime_adj(castprep_X509_getm_notBefore(certificate), -60) != nil,
            castprep_X509_gmtime_adj(castprep_X509_getm_notAfter(certificate), Int(seconds)) != nil,
            castprep_X509_set_pubkey(certificate, key) == 1,
            let name = castprep_X509_get_subject_name(certificate),
            castprep_X509_NAME_add_entry_by_txt(
                name, "CN", MBSTRING_ASC, commonNameBytes, Int32(commonNameBytes.count), -1, 0)
                == 1,
            castprep_X509_set_issuer_name(certificate, name) == 1,
            castprep_X509_sign(certificate, key, castprep_EVP_sha256()) > 0
        else { throw OpenSSLErrors.failure("building the self-signed certificate") }
        let certificateDER = try OpenSSLErrors.der("encoding the certificate") { castprep_i2d_X509(certificate, $0) }
        let keyDER = try OpenSSLErrors.der("encoding the private key") { castprep_i2d_PrivateKey(key, $0) }
        return TLSIdentity(uncheckedCertificateDER: certificateDER, privateKeyDER: keyDER)
    }
}

/// SSL_CTX construction. Contexts are made on the thread that uses them (the event loop), so no
/// OpenSSL pointer ever crosses threads.
enum TLSContexts {
    /// A client context: TLS 1.2 or later, no certificate verification (devices present
    /// self-signed certificates; see ``ChannelOptions/pinnedCertificateSHA256`` for pinning).
    static func makeClientContext() throws(ChannelError) -> OpaquePointer {
        OpenSSLSetup.ensure()
        guard let context = castprep_SSL_CTX_new(castprep_TLS_client_method()) else {
            throw OpenSSLErrors.failure("creating the TLS client context")
        }
        castprep_SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        configure(context)
        return context
    }

    /// A server context presenting `identity`.
    static func makeServerContext(_ identity: TLSIdentity) throws(ChannelError) -> OpaquePointer {
        OpenSSLSetup.ensure()
        guard let context = castprep_SSL_CTX_new(castprep_TLS_server_method()) else {
            throw OpenSSLErrors.failure("creating the TLS server context")
        }
        configure(context)
        let loaded = identity.certificate.derBytes.withUnsafeBufferPointer { certificateBytes in
            identity.privateKeyDER.withUnsafeBufferPointer { keyBytes -> Bool in
                var certificatePointer = certificateBytes.baseAddress
                var keyPointer = keyBytes.baseAddress
                guard let certificate = castprep_d2i_X509(nil, &certificatePointer, certificateBytes.count) else {
                    return false
                }
                defer { castprep_X509_free(certificate) }
                guard let key = castprep_d2i_AutoPrivateKey(nil, &keyPointer, keyBytes.count) else { return false }
                defer { castprep_EVP_PKEY_free(key) }
                return castprep_SSL_CTX_use_certificate(context, certificate) == 1
                    && castprep_SSL_CTX_use_PrivateKey(context, key) == 1
                    && castprep_SSL_CTX_check_private_key(context) == 1
            }
        }
        guard loaded else {
            let error = OpenSSLErrors.failure("loading the server certificate and key")
            castprep_SSL_CTX_free(context)
            throw error
        }
        return context
    }

    private static func configure(_ context: OpaquePointer) {
        _ = castprep_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        _ = castprep_SSL_CTX_enable_nonblocking_writes(context)
        _ = castprep_SSL_CTX_set_options(context, castprep_SSL_OP_IGNORE_UNEXPECTED_EOF())
    }

    /// Frees a context made here.
    static func release(_ context: OpaquePointer) {
        castprep_SSL_CTX_free(context)
    }

    /// The certificate the peer presented, if any.
    static func peerCertificate(of ssl: OpaquePointer) -> ChannelCertificate? {
        guard let certificate = castprep_SSL_get1_peer_certificate(ssl) else { return nil }
        defer { castprep_X509_free(certificate) }
        guard let der = try? OpenSSLErrors.der("encoding the peer certificate", { castprep_i2d_X509(certificate, $0) })
        else {
            return nil
        }
        return ChannelCertificate(derBytes: der)
    }
}

/// OpenSSL initialized once, before any other call into it, without its exit-time cleanup.
/// By default OpenSSL frees its global state from an atexit handler; a process that exits
/// (`castprep receiver` on SIGTERM) while another thread is still in libcrypto then crashes in
/// the freed state. The operating system reclaims that memory at exit anyway.
enum OpenSSLSetup {
    private static let initialized = castprep_OPENSSL_init_ssl(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    /// Call first in every path into OpenSSL.
    static func ensure() { _ = initialized }
}

/// Turns OpenSSL's thread-local error queue into ``ChannelError``s.
enum OpenSSLErrors {
    /// Drains the error queue into one line, oldest first, so the message names the real cause
    /// rather than the last wrapper that failed.
    static func drain() -> String {
        var reasons: [String] = []
        while true {
            let code = castprep_ERR_get_error()
            guard code != 0 else { break }
            var buffer = [CChar](repeating: 0, count: 256)
            castprep_ERR_error_string_n(code, &buffer, buffer.count)
            if reasons.count < 8 {
                reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
            }
        }
        return reasons.joined(separator: "; ")
    }

    static func failure(_ what: String) -> ChannelError {
        let reasons = drain()
        return ChannelError(
            ChannelError.Code.certificateFailed, "OpenSSL failed \(what)\(reasons.isEmpty ? "" : ": \(reasons)")",
            fix: "check that OpenSSL 3 (libssl3) is installed and supports EC P-256")
    }

    /// Runs an `i2d_*` function twice: once for the length, once to fill the buffer.
    static func der(
        _ what: String, _ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32
    ) throws(ChannelError) -> [UInt8] {
        let length = encode(nil)
        guard length > 0 else { throw failure(what) }
        var bytes = [UInt8](repeating: 0, count: Int(length))
        let written = bytes.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return encode(&cursor)
        }
        guard written == length else { throw failure(what) }
        return bytes
    }
}
