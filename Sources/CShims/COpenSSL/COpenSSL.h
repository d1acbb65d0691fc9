// Thin shim over OpenSSL 3.0 (Debian 12). Several calls Swift needs are macros over
// SSL_ctrl / SSL_CTX_ctrl; they get real functions here.
#ifndef CASTPREP_COPENSSL_H
#define CASTPREP_COPENSSL_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/rand.h>
#include <openssl/opensslv.h>

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

#endif
