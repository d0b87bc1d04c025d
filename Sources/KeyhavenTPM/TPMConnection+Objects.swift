import CTSS2
import KeychainModel

/// Keys and sealed secrets in the TPM: made under the storage parent, loaded for one command,
/// and flushed after it (a TPM has a few slots for loaded objects). Commands whose parameters
/// carry a secret run in a salted HMAC session that encrypts them (parameter encryption), so the
/// secret never crosses the bus to the TPM in clear.
extension TPMConnection {
    /// A new P-256 key made inside the TPM, used only with `authorization` (at most 32 bytes,
    /// given in an encrypted session): its blob and its public key (X9.63, `04 || X || Y`).
    package func createP256Key(authorization: [UInt8]) throws(TPMError) -> (blob: TPMObjectBlob, publicKey: [UInt8]) {
        guard authorization.count <= 32 else { throw TPMError(.failed, "the key's authorization is too long") }
        var template = TPM2B_PUBLIC()
        kh_tpm_p256_template(&template)
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { Self.clear(&sensitive) }
        sensitive.sensitive.userAuth.size = UInt16(authorization.count)
        Self.fill(&sensitive.sensitive.userAuth.buffer, with: authorization)
        let blob = try create(template: &template, sensitive: &sensitive, encrypted: true)
        let (publicPart, _) = try blob.unmarshaled()
        let point = publicPart.publicArea.unique.ecc
        return (blob, [0x04] + Self.bytes(point.x) + Self.bytes(point.y))
    }

    /// An ECDSA signature of a 32-byte `digest` (the SHA-256 scheme) with the P-256 key `blob`,
    /// given its authorization (proved in an HMAC session, never sent): `r || s`, 32 bytes each.
    package func sign(_ digest: [UInt8], with blob: TPMObjectBlob, authorization: [UInt8]) throws(TPMError) -> [UInt8] {
        guard digest.count == 32 else { throw TPMError(.failed, "the digest is not 32 bytes") }
        let key = try load(blob)
        defer { flush(key) }
        try setAuthorization(authorization, of: key)
        let session = try startSession(decrypt: false, encrypt: false)
        defer { flush(session) }
        var input = TPM2B_DIGEST()
        input.size = UInt16(digest.count)
        Self.fill(&input.buffer, with: digest)
        var scheme = kh_tpm_ecdsa_sha256_scheme()
        var ticket = kh_tpm_null_ticket()
        var signature: UnsafeMutablePointer<TPMT_SIGNATURE>?
        let rc = Esys_Sign(context, key, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &input, &scheme, &ticket, &signature)
        guard rc == TSS2_RC_SUCCESS, let signature else { throw TPMError("signing with the TPM key", rc: rc) }
        defer { Esys_Free(signature) }
        let ecdsa = signature.pointee.signature.ecdsa
        // A half that begins with zeros may come shorter.
        func fixed(_ half: [UInt8]) -> [UInt8] { [UInt8](repeating: 0, count: max(0, 32 - half.count)) + half.suffix(32) }
        return fixed(Self.bytes(ecdsa.signatureR)) + fixed(Self.bytes(ecdsa.signatureS))
    }

    /// The ECDH shared secret (the x-coordinate of the product) of the key `blob` and the peer's
    /// P-256 public point (X9.63), computed inside the TPM, given the key's authorization. The
    /// point goes in and the secret comes out encrypted.
    package func sharedSecret(with blob: TPMObjectBlob, peer: [UInt8], authorization: [UInt8]) throws(TPMError) -> [UInt8] {
        guard peer.count == 65, peer[0] == 0x04 else { throw TPMError(.failed, "the other key is not an uncompressed P-256 point") }
        let key = try load(blob)
        defer { flush(key) }
        try setAuthorization(authorization, of: key)
        let session = try startSession(decrypt: true, encrypt: true)
        defer { flush(session) }
        var point = TPM2B_ECC_POINT()
        point.point.x.size = 32
        point.point.y.size = 32
        Self.fill(&point.point.x.buffer, with: peer[1...32])
        Self.fill(&point.point.y.buffer, with: peer[33...64])
        var product: UnsafeMutablePointer<TPM2B_ECC_POINT>?
        let rc = Esys_ECDH_ZGen(context, key, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &point, &product)
        guard rc == TSS2_RC_SUCCESS, let product else { throw TPMError("the key agreement in the TPM", rc: rc) }
        defer {
            Self.clear(product)
            Esys_Free(product)
        }
        return Self.bytes(product.pointee.point.x)
    }

    /// `secret` (at most 128 bytes) sealed to this TPM, opened only with `authorization` (at most
    /// 32 bytes), under the TPM's dictionary-attack protection.
    package func seal(_ secret: [UInt8], authorization: [UInt8]) throws(TPMError) -> TPMObjectBlob {
        guard secret.count <= 128, authorization.count <= 32 else { throw TPMError(.failed, "the sealed secret or its authorization is too long") }
        var template = TPM2B_PUBLIC()
        kh_tpm_sealed_template(&template)
        var sensitive = TPM2B_SENSITIVE_CREATE()
        defer { Self.clear(&sensitive) }
        sensitive.sensitive.data.size = UInt16(secret.count)
        Self.fill(&sensitive.sensitive.data.buffer, with: secret)
        sensitive.sensitive.userAuth.size = UInt16(authorization.count)
        Self.fill(&sensitive.sensitive.userAuth.buffer, with: authorization)
        return try create(template: &template, sensitive: &sensitive, encrypted: true)
    }

    /// The secret `blob` seals, given its authorization. A wrong authorization is counted by the
    /// TPM (``TPMError/Code-swift.struct/authFailed``); past its limit every try is refused
    /// (``TPMError/Code-swift.struct/lockout``) until the lockout recovers.
    package func unseal(_ blob: TPMObjectBlob, authorization: [UInt8]) throws(TPMError) -> [UInt8] {
        let object = try load(blob)
        defer { flush(object) }
        try setAuthorization(authorization, of: object)
        let session = try startSession(decrypt: false, encrypt: true)
        defer { flush(session) }
        var data: UnsafeMutablePointer<TPM2B_SENSITIVE_DATA>?
        let rc = Esys_Unseal(context, object, session, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &data)
        guard rc == TSS2_RC_SUCCESS, let data else { throw TPMError("opening the sealed secret", rc: rc) }
        defer {
            Self.clear(data)
            Esys_Free(data)
        }
        return Self.bytes(data.pointee)
    }

    // MARK: - Objects and sessions

    /// The storage parent's handle, made from the owner seed on first use in this connection.
    func storageParent() throws(TPMError) -> ESYS_TR {
        if storageHandle != ESYS_TR(ESYS_TR_NONE) { return storageHandle }
        var template = TPM2B_PUBLIC()
        kh_tpm_storage_template(&template)
        var sensitive = TPM2B_SENSITIVE_CREATE()
        var outside = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var handle = ESYS_TR(ESYS_TR_NONE)
        var publicPart: UnsafeMutablePointer<TPM2B_PUBLIC>?
        var creationData: UnsafeMutablePointer<TPM2B_CREATION_DATA>?
        var creationHash: UnsafeMutablePointer<TPM2B_DIGEST>?
        var ticket: UnsafeMutablePointer<TPMT_TK_CREATION>?
        let rc = Esys_CreatePrimary(context, ESYS_TR(ESYS_TR_RH_OWNER), ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
                                    &sensitive, &template, &outside, &pcrs, &handle, &publicPart, &creationData, &creationHash, &ticket)
        Esys_Free(publicPart); Esys_Free(creationData); Esys_Free(creationHash); Esys_Free(ticket)
        guard rc == TSS2_RC_SUCCESS else { throw TPMError("making the TPM's storage key (is the owner hierarchy's password set?)", rc: rc) }
        storageHandle = handle
        return handle
    }

    private func create(template: inout TPM2B_PUBLIC, sensitive: inout TPM2B_SENSITIVE_CREATE, encrypted: Bool) throws(TPMError) -> TPMObjectBlob {
        let parent = try storageParent()
        // The sensitive part (a sealed secret and its authorization) is the command's first
        // parameter: a session that encrypts it is the second session, beside the parent's password one.
        let session = encrypted ? try startSession(decrypt: true, encrypt: false) : ESYS_TR(ESYS_TR_NONE)
        defer { if encrypted { flush(session) } }
        var outside = TPM2B_DATA()
        var pcrs = TPML_PCR_SELECTION()
        var privatePart: UnsafeMutablePointer<TPM2B_PRIVATE>?
        var publicPart: UnsafeMutablePointer<TPM2B_PUBLIC>?
        var creationData: UnsafeMutablePointer<TPM2B_CREATION_DATA>?
        var creationHash: UnsafeMutablePointer<TPM2B_DIGEST>?
        var ticket: UnsafeMutablePointer<TPMT_TK_CREATION>?
        let rc = Esys_Create(context, parent, ESYS_TR(ESYS_TR_PASSWORD), session, ESYS_TR(ESYS_TR_NONE), &sensitive, &template, &outside, &pcrs,
                             &privatePart, &publicPart, &creationData, &creationHash, &ticket)
        defer { Esys_Free(privatePart); Esys_Free(publicPart); Esys_Free(creationData); Esys_Free(creationHash); Esys_Free(ticket) }
        guard rc == TSS2_RC_SUCCESS, let privatePart, let publicPart else { throw TPMError("making an object in the TPM", rc: rc) }
        return try TPMObjectBlob(publicPart, privatePart)
    }

    /// Loads `blob` under the storage parent. A blob another TPM made (or this one before it was
    /// cleared) does not load: ``TPMError/Code-swift.struct/foreignObject``.
    private func load(_ blob: TPMObjectBlob) throws(TPMError) -> ESYS_TR {
        let parent = try storageParent()
        var (publicPart, privatePart) = try blob.unmarshaled()
        var handle = ESYS_TR(ESYS_TR_NONE)
        let rc = Esys_Load(context, parent, ESYS_TR(ESYS_TR_PASSWORD), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), &privatePart, &publicPart,
                           &handle)
        guard rc == TSS2_RC_SUCCESS else {
            let error = TPMError("loading the object into the TPM", rc: rc)
            // Only a blob this storage parent cannot open is another TPM's (or a cleared one's):
            // TPM_RC_INTEGRITY, TPM_RC_KEY, TPM_RC_BINDING, TPM_RC_SIZE. Anything else (no room, a
            // stale handle) says nothing about the keychain and is reported as it is.
            let (layer, number) = TPMError.layerAndNumber(rc)
            guard layer == 0, [0x09f, 0x09c, 0x0a5, 0x095].contains(number) else { throw error }
            throw TPMError(.foreignObject, "this TPM cannot open the object: another TPM made it, or this TPM was cleared since "
                           + "(\(TPMError.decode(rc)))")
        }
        return handle
    }

    /// A salted HMAC session (salted by the storage parent) whose AES-128-CFB encrypts the first
    /// command parameter (`decrypt`) and/or the first response parameter (`encrypt`).
    private func startSession(decrypt: Bool, encrypt: Bool) throws(TPMError) -> ESYS_TR {
        let parent = try storageParent()
        var cipher = kh_tpm_session_cipher()
        var session = ESYS_TR(ESYS_TR_NONE)
        var rc = Esys_StartAuthSession(context, parent, ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE), ESYS_TR(ESYS_TR_NONE),
                                       nil, TPM2_SE(TPM2_SE_HMAC), &cipher, kh_tpm_sha256(), &session)
        guard rc == TSS2_RC_SUCCESS else { throw TPMError("starting an encrypted session with the TPM", rc: rc) }
        rc = Esys_TRSess_SetAttributes(context, session, kh_tpm_session_attributes(decrypt ? 1 : 0, encrypt ? 1 : 0), 0xff)
        guard rc == TSS2_RC_SUCCESS else {
            flush(session)
            throw TPMError("setting the session's encryption", rc: rc)
        }
        return session
    }

    private func flush(_ handle: ESYS_TR) { _ = Esys_FlushContext(context, handle) }

    /// The authorization value ESAPI uses for a loaded object in the sessions that follow.
    private func setAuthorization(_ authorization: [UInt8], of object: ESYS_TR) throws(TPMError) {
        var auth = TPM2B_AUTH()
        defer { Self.clear(&auth) }
        auth.size = UInt16(min(authorization.count, 32))
        Self.fill(&auth.buffer, with: authorization.prefix(32))
        let rc = Esys_TR_SetAuth(context, object, &auth)
        guard rc == TSS2_RC_SUCCESS else { throw TPMError("setting the object's authorization", rc: rc) }
    }

    // MARK: - Sized buffers

    static func bytes(_ parameter: TPM2B_ECC_PARAMETER) -> [UInt8] {
        withUnsafeBytes(of: parameter.buffer) { Array($0.prefix(Int(parameter.size))) }
    }
    static func bytes(_ data: TPM2B_SENSITIVE_DATA) -> [UInt8] {
        withUnsafeBytes(of: data.buffer) { Array($0.prefix(Int(data.size))) }
    }
    static func fill<Buffer, Bytes: Collection<UInt8>>(_ buffer: inout Buffer, with bytes: Bytes) {
        withUnsafeMutableBytes(of: &buffer) { raw in
            for (index, byte) in bytes.enumerated() where index < raw.count { raw[index] = byte }
        }
    }
    static func clear<Value>(_ value: UnsafeMutablePointer<Value>) {
        UnsafeMutableRawPointer(value).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<Value>.size)
    }
    static func clear<Value>(_ value: inout Value) {
        withUnsafeMutableBytes(of: &value) { raw in raw.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}
