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

#endif
