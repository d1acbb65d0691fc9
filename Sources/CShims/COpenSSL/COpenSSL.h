// Thin shim over OpenSSL 3.0 (Debian 12): run-time loading, and real functions for the calls
// Swift needs that are macros over SSL_ctrl / SSL_CTX_ctrl / BIO_ctrl / EVP_PKEY_Q_keygen.
//
// Why at run time: only the Cast sender and receiver (TLS) and SHA-256 digests (certificate
// fingerprints, preflight's shards, probe and check memos) call OpenSSL, and binding libssl
// and libcrypto when castprep starts cost every other command (load, validate, captions,
// --version) about a millisecond. The functions are resolved with dlopen/dlsym on first use,
// as CCurl.h does for libcurl: Swift calls castprep_<name>() instead of <name>(), each table
// entry is declared with __typeof__ of the real declaration (a wrong wrapper does not
// compile), and a wrapper reached when the library cannot be loaded stops the process with a
// message naming the package, as the dynamic loader did before main() when it was linked.
// One handle on libssl serves both: dlsym searches an object's dependencies, libcrypto among
// them.
#ifndef CASTPREP_COPENSSL_H
#define CASTPREP_COPENSSL_H

#if !__has_include(<openssl/ssl.h>)
#error "OpenSSL development headers not found; install them: apt-get install libssl-dev"
#endif

#include "../LibraryLoading/castprep_library.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/rand.h>
#include <openssl/opensslv.h>

// OpenSSL 3's libssl; it depends on libcrypto.so.3, which dlopen loads with it.
#if defined(__APPLE__)
#define CASTPREP_OPENSSL_SONAME "libssl.3.dylib"
#else
#define CASTPREP_OPENSSL_SONAME "libssl.so.3"
#endif

/// The Debian package that installs CASTPREP_OPENSSL_SONAME, for fix hints.
#define CASTPREP_OPENSSL_PACKAGE "libssl3"

// Every OpenSSL function CastPrep calls: return type, name, parameters, arguments.
#define CASTPREP_OPENSSL_FUNCTIONS(X) \
    X(int, OPENSSL_init_ssl, (uint64_t options, const OPENSSL_INIT_SETTINGS *settings), (options, settings)) \
    X(int, OPENSSL_init_crypto, (uint64_t options, const OPENSSL_INIT_SETTINGS *settings), (options, settings)) \
    X(unsigned long, OpenSSL_version_num, (void), ()) \
    X(int, OPENSSL_sk_num, (const OPENSSL_STACK *stack), (stack)) \
    X(unsigned long, ERR_get_error, (void), ()) \
    X(unsigned long, ERR_peek_error, (void), ()) \
    X(void, ERR_clear_error, (void), ()) \
    X(void, ERR_error_string_n, (unsigned long error, char *buffer, size_t length), (error, buffer, length)) \
    X(const SSL_METHOD *, TLS_client_method, (void), ()) \
    X(const SSL_METHOD *, TLS_server_method, (void), ()) \
    X(SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *method), (method)) \
    X(void, SSL_CTX_free, (SSL_CTX *context), (context)) \
    X(long, SSL_CTX_ctrl, (SSL_CTX *context, int command, long number, void *pointer), (context, command, number, pointer)) \
    X(uint64_t, SSL_CTX_set_options, (SSL_CTX *context, uint64_t options), (context, options)) \
    X(void, SSL_CTX_set_verify, (SSL_CTX *context, int mode, SSL_verify_cb callback), (context, mode, callback)) \
    X(int, SSL_CTX_use_certificate, (SSL_CTX *context, X509 *certificate), (context, certificate)) \
    X(int, SSL_CTX_use_PrivateKey, (SSL_CTX *context, EVP_PKEY *key), (context, key)) \
    X(int, SSL_CTX_check_private_key, (const SSL_CTX *context), (context)) \
    X(SSL *, SSL_new, (SSL_CTX *context), (context)) \
    X(void, SSL_free, (SSL *ssl), (ssl)) \
    X(long, SSL_ctrl, (SSL *ssl, int command, long number, void *pointer), (ssl, command, number, pointer)) \
    X(void, SSL_set_bio, (SSL *ssl, BIO *read, BIO *write), (ssl, read, write)) \
    X(void, SSL_set_connect_state, (SSL *ssl), (ssl)) \
    X(void, SSL_set_accept_state, (SSL *ssl), (ssl)) \
    X(int, SSL_do_handshake, (SSL *ssl), (ssl)) \
    X(int, SSL_read, (SSL *ssl, void *buffer, int count), (ssl, buffer, count)) \
    X(int, SSL_write, (SSL *ssl, const void *buffer, int count), (ssl, buffer, count)) \
    X(int, SSL_pending, (const SSL *ssl), (ssl)) \
    X(int, SSL_shutdown, (SSL *ssl), (ssl)) \
    X(int, SSL_get_error, (const SSL *ssl, int result), (ssl, result)) \
    X(X509 *, SSL_get1_peer_certificate, (const SSL *ssl), (ssl)) \
    X(const BIO_METHOD *, BIO_s_mem, (void), ()) \
    X(BIO *, BIO_new, (const BIO_METHOD *method), (method)) \
    X(long, BIO_ctrl, (BIO *bio, int command, long number, void *pointer), (bio, command, number, pointer)) \
    X(size_t, BIO_ctrl_pending, (BIO *bio), (bio)) \
    X(int, BIO_read, (BIO *bio, void *data, int length), (bio, data, length)) \
    X(int, BIO_write, (BIO *bio, const void *data, int length), (bio, data, length)) \
    X(const EVP_MD *, EVP_sha256, (void), ()) \
    X(EVP_MD_CTX *, EVP_MD_CTX_new, (void), ()) \
    X(void, EVP_MD_CTX_free, (EVP_MD_CTX *context), (context)) \
    X(int, EVP_DigestInit_ex, (EVP_MD_CTX *context, const EVP_MD *type, ENGINE *engine), (context, type, engine)) \
    X(int, EVP_DigestUpdate, (EVP_MD_CTX *context, const void *data, size_t count), (context, data, count)) \
    X(int, EVP_DigestFinal_ex, (EVP_MD_CTX *context, unsigned char *digest, unsigned int *size), (context, digest, size)) \
    X(void, EVP_PKEY_free, (EVP_PKEY *key), (key)) \
    X(int, i2d_PrivateKey, (const EVP_PKEY *key, unsigned char **out), (key, out)) \
    X(EVP_PKEY *, d2i_AutoPrivateKey, (EVP_PKEY **key, const unsigned char **in, long length), (key, in, length)) \
    X(X509 *, X509_new, (void), ()) \
    X(void, X509_free, (X509 *certificate), (certificate)) \
    X(int, i2d_X509, (const X509 *certificate, unsigned char **out), (certificate, out)) \
    X(X509 *, d2i_X509, (X509 **certificate, const unsigned char **in, long length), (certificate, in, length)) \
    X(int, X509_set_version, (X509 *certificate, long version), (certificate, version)) \
    X(ASN1_INTEGER *, X509_get_serialNumber, (X509 *certificate), (certificate)) \
    X(int, ASN1_INTEGER_set_uint64, (ASN1_INTEGER *integer, uint64_t value), (integer, value)) \
    X(ASN1_TIME *, X509_gmtime_adj, (ASN1_TIME *time, long seconds), (time, seconds)) \
    X(ASN1_TIME *, X509_getm_notBefore, (const X509 *certificate), (certificate)) \
    X(ASN1_TIME *, X509_getm_notAfter, (const X509 *certificate), (certificate)) \
    X(const ASN1_TIME *, X509_get0_notBefore, (const X509 *certificate), (certificate)) \
    X(const ASN1_TIME *, X509_get0_notAfter, (const X509 *certificate), (certificate)) \
    X(int, ASN1_TIME_diff, (int *days, int *seconds, const ASN1_TIME *from, const ASN1_TIME *to), (days, seconds, from, to)) \
    X(X509_NAME *, X509_get_subject_name, (const X509 *certificate), (certificate)) \
    X(int, X509_NAME_add_entry_by_txt, (X509_NAME *name, const char *field, int type, const unsigned char *bytes, int length, int location, int set), (name, field, type, bytes, length, location, set)) \
    X(int, X509_set_issuer_name, (X509 *certificate, const X509_NAME *name), (certificate, name)) \
    X(int, X509_set_pubkey, (X509 *certificate, EVP_PKEY *key), (certificate, key)) \
    X(int, X509_sign, (X509 *certificate, EVP_PKEY *key, const EVP_MD *digest), (certificate, key, digest))

/// The resolved functions (EVP_PKEY_Q_keygen, variadic, has no wrapper: EVP_EC_gen below
/// calls it), or the reason they could not be resolved.
typedef struct castprep_openssl_api {
    /// Whether loading worked, and if not why (see castprep_library.h).
    castprep_library_status status;
    CASTPREP_OPENSSL_FUNCTIONS(CASTPREP_LIBRARY_FIELD)
    __typeof__(EVP_PKEY_Q_keygen) *EVP_PKEY_Q_keygen;
} castprep_openssl_api;

/// Opens the library and resolves every function of the table (see castprep_library.h).
static inline void castprep_openssl_resolve(castprep_openssl_api *api) {
    const char *library = CASTPREP_OPENSSL_SONAME;
    void *handle = castprep_library_open(&api->status, "OpenSSL (" CASTPREP_OPENSSL_SONAME ")", library);
    if (handle == NULL) return;
    CASTPREP_OPENSSL_FUNCTIONS(CASTPREP_LIBRARY_RESOLVE_FUNCTION)
    CASTPREP_LIBRARY_RESOLVE_VARIADIC(EVP_PKEY_Q_keygen)
}

CASTPREP_LIBRARY_ACCESSORS(openssl, castprep_openssl_api, castprep_openssl_resolve, "install it: apt-get install " CASTPREP_OPENSSL_PACKAGE)

#define CASTPREP_LIBRARY_CHECKED castprep_openssl_checked
CASTPREP_OPENSSL_FUNCTIONS(CASTPREP_LIBRARY_WRAPPER)
#undef CASTPREP_LIBRARY_CHECKED

// The macros below expand to SSL_ctrl, SSL_CTX_ctrl, BIO_ctrl and EVP_PKEY_Q_keygen; while
// they are defined, those names call through the table.
#define SSL_ctrl castprep_SSL_ctrl
#define SSL_CTX_ctrl castprep_SSL_CTX_ctrl
#define BIO_ctrl castprep_BIO_ctrl
#define EVP_PKEY_Q_keygen (castprep_openssl_checked()->EVP_PKEY_Q_keygen)

/// SSL_set_tlsext_host_name is a macro over SSL_ctrl.
static inline long castprep_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}
/// SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl.
static inline long castprep_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

// CastChannel: non-blocking TLS sessions and in-memory self-signed certificates.
/// SSL_CTX_set_mode is a macro over SSL_CTX_ctrl. A non-blocking socket needs partial writes
/// (SSL_write returns what fit) and may retry a write from a buffer that moved in memory.
static inline long castprep_SSL_CTX_enable_nonblocking_writes(SSL_CTX *ctx) {
    return SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}
/// SSL_OP_IGNORE_UNEXPECTED_EOF is built with a function-like macro Swift cannot import. With
/// it a peer that closes the socket without close_notify reads as an orderly end of stream.
static inline uint64_t castprep_SSL_OP_IGNORE_UNEXPECTED_EOF(void) {
    return SSL_OP_IGNORE_UNEXPECTED_EOF;
}
/// EVP_EC_gen is a macro over the variadic EVP_PKEY_Q_keygen.
static inline EVP_PKEY *castprep_EVP_EC_gen(const char *curve) {
    return EVP_EC_gen(curve);
}
/// BIO_set_mem_eof_return is a macro over BIO_ctrl. A memory BIO that reads as end of stream
/// (0) once empty, instead of "retry later" (-1): the TLS stream sets it when the transport
/// below has ended, so OpenSSL sees the peer's end of stream.
static inline long castprep_BIO_set_mem_eof_return(BIO *bio, long value) {
    return BIO_set_mem_eof_return(bio, value);
}

#undef SSL_ctrl
#undef SSL_CTX_ctrl
#undef BIO_ctrl
#undef EVP_PKEY_Q_keygen

#endif
