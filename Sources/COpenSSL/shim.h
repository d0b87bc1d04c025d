// The system OpenSSL (libcrypto 3), for PKCS#12 files and password-encrypted private keys, X.509
// path validation with the system's roots (SecTrust), reading certificates (SecCertificate), scrypt for keychain passwords (built optimized, where
// swift-crypto's is compiled with Keyhaven, unoptimized in debug builds), and the
// Secret Service's 1024-bit Diffie-Hellman (its big-number arithmetic), and the X9.63 KDF over a
// shared secret the TPM computed (swift-crypto derives only from its own agreements):
// swift-crypto has neither PKCS#12 nor PKCS#5 password-based encryption, and the legacy ciphers
// of older files (RC2-40, 3DES) live in OpenSSL's legacy provider. Keyhaven's other cryptography
// is swift-crypto's (docs/compatibility.md, "PKCS#12 and encrypted keys").
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/core_names.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

// OpenSSL's STACK_OF macros, as functions Swift can call.
static inline int keyhaven_sk_X509_num(const STACK_OF(X509) *stack) { return sk_X509_num(stack); }
static inline X509 *keyhaven_sk_X509_value(const STACK_OF(X509) *stack, int index) { return sk_X509_value(stack, index); }
static inline void keyhaven_sk_X509_pop_free(STACK_OF(X509) *stack) { sk_X509_pop_free(stack, X509_free); }
static inline STACK_OF(X509) *keyhaven_sk_X509_new_null(void) { return sk_X509_new_null(); }
static inline int keyhaven_sk_X509_push(STACK_OF(X509) *stack, X509 *certificate) { return sk_X509_push(stack, certificate); }
static inline void keyhaven_sk_PKCS12_SAFEBAG_pop_free(STACK_OF(PKCS12_SAFEBAG) *stack) {
    sk_PKCS12_SAFEBAG_pop_free(stack, PKCS12_SAFEBAG_free);
}
static inline void keyhaven_sk_PKCS7_pop_free(STACK_OF(PKCS7) *stack) { sk_PKCS7_pop_free(stack, PKCS7_free); }
static inline long keyhaven_BIO_get_mem_data(BIO *bio, char **data) { return BIO_get_mem_data(bio, data); }
static inline int keyhaven_sk_PKCS7_num(const STACK_OF(PKCS7) *stack) { return sk_PKCS7_num(stack); }
static inline PKCS7 *keyhaven_sk_PKCS7_value(const STACK_OF(PKCS7) *stack, int index) { return sk_PKCS7_value(stack, index); }
static inline int keyhaven_sk_PKCS12_SAFEBAG_num(const STACK_OF(PKCS12_SAFEBAG) *stack) { return sk_PKCS12_SAFEBAG_num(stack); }
static inline PKCS12_SAFEBAG *keyhaven_sk_PKCS12_SAFEBAG_value(const STACK_OF(PKCS12_SAFEBAG) *stack, int index) {
    return sk_PKCS12_SAFEBAG_value(stack, index);
}
// A certificate's subject alternative names and extended key usages (X509_get_ext_d2i).
static inline int keyhaven_sk_GENERAL_NAME_num(const STACK_OF(GENERAL_NAME) *stack) { return sk_GENERAL_NAME_num(stack); }
static inline GENERAL_NAME *keyhaven_sk_GENERAL_NAME_value(const STACK_OF(GENERAL_NAME) *stack, int index) {
    return sk_GENERAL_NAME_value(stack, index);
}
static inline int keyhaven_sk_ASN1_OBJECT_num(const STACK_OF(ASN1_OBJECT) *stack) { return sk_ASN1_OBJECT_num(stack); }
static inline ASN1_OBJECT *keyhaven_sk_ASN1_OBJECT_value(const STACK_OF(ASN1_OBJECT) *stack, int index) {
    return sk_ASN1_OBJECT_value(stack, index);
}
static inline void keyhaven_EXTENDED_KEY_USAGE_free(void *usage) { EXTENDED_KEY_USAGE_free(usage); }
// RFC 2253's (4514's) text of a name: the macro ORs others, which Swift does not import.
static inline unsigned long keyhaven_XN_FLAG_RFC2253(void) { return XN_FLAG_RFC2253; }
static inline void keyhaven_GENERAL_NAMES_free(void *names) { GENERAL_NAMES_free(names); }
// The content type of a PKCS#7 structure (data or encrypted data, in a PKCS#12 file).
static inline int keyhaven_PKCS7_type_nid(const PKCS7 *p7) { return OBJ_obj2nid(p7->type); }
