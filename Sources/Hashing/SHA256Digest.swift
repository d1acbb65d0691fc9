internal import COpenSSL

/// A SHA-256 digest (FIPS 180-4) computed by OpenSSL, fed in pieces of any size: the one
/// implementation every module uses, for a certificate's fingerprint as for the catalog a
/// preflight shard was checked from.
///
/// Noncopyable: it owns OpenSSL's digest context, which a copy would share. ``finish()``
/// consumes it.
///
/// ```swift
/// var digest = SHA256Digest()
/// digest.update(Array("ab".utf8))
/// digest.update(Array("c".utf8))
/// let hex = digest.finish().map(SHA256Digest.hexadecimal)
/// // "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
/// ```
public struct SHA256Digest: ~Copyable {
    /// The size of a digest in bytes.
    public static let byteCount = 32

    /// OpenSSL's `EVP_MD_CTX`; nil when it could not be allocated.
    private let context: OpaquePointer?
    /// Whether a call into OpenSSL failed, so ``finish()`` has no digest to give.
    private var failed: Bool

    /// Starts an empty digest.
    public init() {
        OpenSSLCrypto.ensureInitialized()
        let context = castprep_EVP_MD_CTX_new()
        self.context = context
        failed = context == nil || castprep_EVP_DigestInit_ex(context, castprep_EVP_sha256(), nil) != 1
    }

    deinit { castprep_EVP_MD_CTX_free(context) }

    /// Adds `bytes` to what is digested.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !failed, let base = bytes.baseAddress, !bytes.isEmpty else { return }
        if castprep_EVP_DigestUpdate(context, base, bytes.count) != 1 { failed = true }
    }

    /// Adds `bytes` to what is digested (without a copy when they are contiguous in memory,
    /// as an array's, a slice's or `Data`'s are).
    public mutating func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// The digest of everything added, ``byteCount`` bytes; nil when OpenSSL failed (it
    /// could not allocate its context).
    public consuming func finish() -> [UInt8]? {
        guard !failed else { return nil }
        var digest = [UInt8](repeating: 0, count: 64)  // EVP_MAX_MD_SIZE
        var length: UInt32 = 0
        guard castprep_EVP_DigestFinal_ex(context, &digest, &length) == 1, Int(length) == Self.byteCount else {
            return nil
        }
        return Array(digest.prefix(Self.byteCount))
    }

    /// The digest of `bytes` in one call; nil when OpenSSL failed.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8]? {
        var digest = SHA256Digest()
        digest.update(bytes)
        return digest.finish()
    }

    /// `digest` in lowercase hexadecimal, two digits a byte, as `sha256sum` prints it.
    public static func hexadecimal(_ digest: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}

@available(*, unavailable)
extension SHA256Digest: Sendable {}

/// OpenSSL's one-time set-up, without its exit handler.
///
/// By default libcrypto frees its global state from an atexit handler, and a process that
/// exits while another thread is still in libcrypto then crashes in the freed state (seen:
/// preflight's `http-transport` thread killed by SIGSEGV in `OPENSSL_sk_num` as the run
/// ended); the operating system reclaims that memory at exit anyway. The first
/// initialisation in the process decides, whoever makes it, so this runs before any digest,
/// before libcurl's `curl_global_init` (which initialises OpenSSL with the handler), and
/// CastChannel's TLS set-up asks for the same.
public enum OpenSSLCrypto {
    private static let initialized = castprep_OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil) == 1

    /// Call before the first call into libcrypto, by this process or a library it loads.
    public static func ensureInitialized() { _ = initialized }
}
