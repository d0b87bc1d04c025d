#ifndef KEYHAVEN_CTSS2_SHIM_H
#define KEYHAVEN_CTSS2_SHIM_H
#include <string.h>
#include <tss2/tss2_esys.h>
#include <tss2/tss2_tctildr.h>
#include <tss2/tss2_rc.h>
#include <tss2/tss2_mu.h>

// The TPM's properties as GetCapability answers them: a C array Swift sees as a tuple of 127.
static inline UINT32 kh_tpm_property_count(const TPMS_CAPABILITY_DATA *data) { return data->data.tpmProperties.count; }
static inline TPMS_TAGGED_PROPERTY kh_tpm_property(const TPMS_CAPABILITY_DATA *data, UINT32 index) {
    return data->data.tpmProperties.tpmProperty[index];
}

// Templates for TPM2_CreatePrimary and TPM2_Create. Their attribute and algorithm macros carry
// casts Swift does not import, so the structures are filled here.

// An ECC P-256 object with SHA-256 names, no fixed scheme and no KDF, with these attributes.
static inline void kh_tpm_p256_object(TPM2B_PUBLIC *out, TPMA_OBJECT attributes) {
    memset(out, 0, sizeof *out);
    TPMT_PUBLIC *area = &out->publicArea;
    area->type = TPM2_ALG_ECC;
    area->nameAlg = TPM2_ALG_SHA256;
    area->objectAttributes = attributes;
    area->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_NULL;
    area->parameters.eccDetail.scheme.scheme = TPM2_ALG_NULL;
    area->parameters.eccDetail.curveID = TPM2_ECC_NIST_P256;
    area->parameters.eccDetail.kdf.scheme = TPM2_ALG_NULL;
}

// The storage parent of every Keyhaven object: an ECC P-256 restricted decryption key in the owner
// hierarchy with AES-128-CFB for its children, the shape of the TCG's standard storage root key.
// Made again from the owner seed on each connection (the same key each time until the TPM is
// cleared); not subject to dictionary-attack counting (it has no authorization value).
static inline void kh_tpm_storage_template(TPM2B_PUBLIC *out) {
    kh_tpm_p256_object(out, TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_RESTRICTED | TPMA_OBJECT_DECRYPT);
    TPMT_PUBLIC *area = &out->publicArea;
    area->parameters.eccDetail.symmetric.algorithm = TPM2_ALG_AES;
    area->parameters.eccDetail.symmetric.keyBits.aes = 128;
    area->parameters.eccDetail.symmetric.mode.aes = TPM2_ALG_CFB;
    area->unique.ecc.x.size = 32;
    area->unique.ecc.y.size = 32;
}

// A Secure Enclave key: P-256, made inside the TPM and never leaving it (fixedTPM), for signatures
// and ECDH alike (no fixed scheme: each command names its own). Its authorization value is empty:
// the agent checks the keychain item's access before each use.
static inline void kh_tpm_p256_template(TPM2B_PUBLIC *out) {
    kh_tpm_p256_object(out, TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_SENSITIVEDATAORIGIN
        | TPMA_OBJECT_USERWITHAUTH | TPMA_OBJECT_NODA | TPMA_OBJECT_SIGN_ENCRYPT | TPMA_OBJECT_DECRYPT);
}

// A sealed secret (a keychain's device key): a keyed-hash object holding data the caller gives,
// opened only with its authorization value, which the TPM's dictionary-attack protection guards.
static inline void kh_tpm_sealed_template(TPM2B_PUBLIC *out) {
    memset(out, 0, sizeof *out);
    TPMT_PUBLIC *area = &out->publicArea;
    area->type = TPM2_ALG_KEYEDHASH;
    area->nameAlg = TPM2_ALG_SHA256;
    area->objectAttributes = TPMA_OBJECT_FIXEDTPM | TPMA_OBJECT_FIXEDPARENT | TPMA_OBJECT_USERWITHAUTH;
    area->parameters.keyedHashDetail.scheme.scheme = TPM2_ALG_NULL;
}

// AES-128-CFB, the parameter encryption of an HMAC session.
static inline TPMT_SYM_DEF kh_tpm_session_cipher(void) {
    TPMT_SYM_DEF cipher;
    memset(&cipher, 0, sizeof cipher);
    cipher.algorithm = TPM2_ALG_AES;
    cipher.keyBits.aes = 128;
    cipher.mode.aes = TPM2_ALG_CFB;
    return cipher;
}

// SHA-256, the hash of every session and signature scheme here.
static inline TPMI_ALG_HASH kh_tpm_sha256(void) { return TPM2_ALG_SHA256; }

// ECDSA with SHA-256 for TPM2_Sign, and the null ticket an unrestricted key signs with.
static inline TPMT_SIG_SCHEME kh_tpm_ecdsa_sha256_scheme(void) {
    TPMT_SIG_SCHEME scheme;
    memset(&scheme, 0, sizeof scheme);
    scheme.scheme = TPM2_ALG_ECDSA;
    scheme.details.ecdsa.hashAlg = TPM2_ALG_SHA256;
    return scheme;
}
static inline TPMT_TK_HASHCHECK kh_tpm_null_ticket(void) {
    TPMT_TK_HASHCHECK ticket;
    memset(&ticket, 0, sizeof ticket);
    ticket.tag = TPM2_ST_HASHCHECK;
    ticket.hierarchy = TPM2_RH_NULL;
    return ticket;
}

// Session attributes: continue, and encrypt the first command and/or response parameter.
static inline TPMA_SESSION kh_tpm_session_attributes(int decrypt, int encrypt) {
    return TPMA_SESSION_CONTINUESESSION | (decrypt ? TPMA_SESSION_DECRYPT : 0) | (encrypt ? TPMA_SESSION_ENCRYPT : 0);
}
#endif
