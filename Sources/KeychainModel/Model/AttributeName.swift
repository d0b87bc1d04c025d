/// The name of an item attribute: Apple's four-letter code (`SecItemSchema.c`), said once here.
///
/// Item attributes are kept as `[String: AttributeValue]`, the codes themselves (they are what
/// the keychain file stores and the agent protocol carries); code reads and writes them through
/// these names, so a misspelt attribute does not compile. `ArchitectureDocumentTests` fails on a
/// code written as a literal anywhere else.
package struct AttributeName: Sendable, Hashable, CustomStringConvertible {
    /// The four-letter code.
    package let code: String

    private init(_ code: String) { self.code = code }

    package var description: String { code }

    /// `kSecAttrAccessible`.
    package static let accessible = AttributeName("pdmn")
    /// `kSecAttrAccessControl`.
    package static let accessControl = AttributeName("accc")
    /// `kSecAttrAccessGroup`.
    package static let accessGroup = AttributeName("agrp")
    /// `kSecAttrCreationDate`.
    package static let creationDate = AttributeName("cdat")
    /// `kSecAttrModificationDate`.
    package static let modificationDate = AttributeName("mdat")
    /// `kSecAttrDescription`.
    package static let `description` = AttributeName("desc")
    /// `kSecAttrComment`.
    package static let comment = AttributeName("icmt")
    /// `kSecAttrCreator` and `kSecAttrKeyCreator`.
    package static let creator = AttributeName("crtr")
    /// `kSecAttrType` and `kSecAttrKeyType`.
    package static let type = AttributeName("type")
    /// `kSecAttrLabel`.
    package static let label = AttributeName("labl")
    /// `kSecAttrIsInvisible`.
    package static let isInvisible = AttributeName("invi")
    /// `kSecAttrIsNegative`.
    package static let isNegative = AttributeName("nega")
    /// `kSecAttrAccount`.
    package static let account = AttributeName("acct")
    /// `kSecAttrService`.
    package static let service = AttributeName("svce")
    /// `kSecAttrGeneric`.
    package static let generic = AttributeName("gena")
    /// `kSecAttrSecurityDomain`.
    package static let securityDomain = AttributeName("sdmn")
    /// `kSecAttrServer`.
    package static let server = AttributeName("srvr")
    /// `kSecAttrProtocol`.
    package static let `protocol` = AttributeName("ptcl")
    /// `kSecAttrAuthenticationType`.
    package static let authenticationType = AttributeName("atyp")
    /// `kSecAttrPort`.
    package static let port = AttributeName("port")
    /// `kSecAttrPath`.
    package static let path = AttributeName("path")
    /// `kSecAttrAlias`.
    package static let alias = AttributeName("alis")
    /// `kSecAttrSubject`.
    package static let subject = AttributeName("subj")
    /// `kSecAttrIssuer`.
    package static let issuer = AttributeName("issr")
    /// `kSecAttrSerialNumber`.
    package static let serialNumber = AttributeName("slnr")
    /// `kSecAttrSubjectKeyID`.
    package static let subjectKeyID = AttributeName("skid")
    /// `kSecAttrPublicKeyHash`.
    package static let publicKeyHash = AttributeName("pkhh")
    /// `kSecAttrCertificateType`.
    package static let certificateType = AttributeName("ctyp")
    /// `kSecAttrCertificateEncoding`.
    package static let certificateEncoding = AttributeName("cenc")
    /// `kSecAttrKeyClass`.
    package static let keyClass = AttributeName("kcls")
    /// `kSecAttrApplicationLabel`.
    package static let applicationLabel = AttributeName("klbl")
    /// `kSecAttrIsPermanent`.
    package static let isPermanent = AttributeName("perm")
    /// `kSecAttrIsPrivate`.
    package static let isPrivate = AttributeName("priv")
    /// `kSecAttrIsModifiable`.
    package static let isModifiable = AttributeName("modi")
    /// `kSecAttrApplicationTag`.
    package static let applicationTag = AttributeName("atag")
    /// `kSecAttrKeySizeInBits`.
    package static let keySizeInBits = AttributeName("bsiz")
    /// `kSecAttrEffectiveKeySize`.
    package static let effectiveKeySize = AttributeName("esiz")
    /// `kSecAttrStartDate`.
    package static let startDate = AttributeName("sdat")
    /// `kSecAttrEndDate`.
    package static let endDate = AttributeName("edat")
    /// `kSecAttrIsSensitive`.
    package static let isSensitive = AttributeName("sens")
    /// `kSecAttrWasAlwaysSensitive`.
    package static let wasAlwaysSensitive = AttributeName("asen")
    /// `kSecAttrIsExtractable`.
    package static let isExtractable = AttributeName("extr")
    /// `kSecAttrWasNeverExtractable`.
    package static let wasNeverExtractable = AttributeName("next")
    /// `kSecAttrCanEncrypt`.
    package static let canEncrypt = AttributeName("encr")
    /// `kSecAttrCanDecrypt`.
    package static let canDecrypt = AttributeName("decr")
    /// `kSecAttrCanDerive`.
    package static let canDerive = AttributeName("drve")
    /// `kSecAttrCanSign`.
    package static let canSign = AttributeName("sign")
    /// `kSecAttrCanVerify`.
    package static let canVerify = AttributeName("vrfy")
    /// `kSecAttrCanSignRecover`.
    package static let canSignRecover = AttributeName("snrc")
    /// `kSecAttrCanVerifyRecover`.
    package static let canVerifyRecover = AttributeName("vyrc")
    /// `kSecAttrCanWrap`.
    package static let canWrap = AttributeName("wrap")
    /// `kSecAttrCanUnwrap`.
    package static let canUnwrap = AttributeName("unwp")
    /// `kSecAttrSyncViewHint`.
    package static let syncViewHint = AttributeName("vwht")
    /// `kSecAttrTokenID`.
    package static let tokenID = AttributeName("tkid")
    /// `kSecAttrScriptCode`.
    package static let scriptCode = AttributeName("scrp")
    /// `kSecAttrHasCustomIcon`.
    package static let hasCustomIcon = AttributeName("cusi")
    /// `kSecAttrSynchronizable`.
    package static let synchronizable = AttributeName("sync")
    /// `kSecAttrTombstone`.
    package static let tombstone = AttributeName("tomb")
    /// `kSecAttrMultiUser`.
    package static let multiUser = AttributeName("musr")
    /// `kSecAttrNoLegacy`.
    package static let noLegacy = AttributeName("nleg")
    /// `kSecAttrTokenOID`.
    package static let tokenOID = AttributeName("toid")
    /// `kSecAttrSysBound`.
    package static let sysBound = AttributeName("sysb")
    /// `kSecAttrSHA1`.
    package static let sha1 = AttributeName("sha1")
    /// `kSecAttrSharingGroup`.
    package static let sharingGroup = AttributeName("ggrp")
    /// `kSecAttrPCSPlaintextServiceIdentifier`.
    package static let pcsPlaintextServiceIdentifier = AttributeName("pcss")
    /// `kSecAttrPCSPlaintextPublicKey`.
    package static let pcsPlaintextPublicKey = AttributeName("pcsk")
    /// `kSecAttrPCSPlaintextPublicIdentity`.
    package static let pcsPlaintextPublicIdentity = AttributeName("pcsi")
    /// `kSecAttrVolume`.
    package static let volume = AttributeName("volm")
    /// `kSecAttrAddress`.
    package static let address = AttributeName("addr")
    /// `kSecAttrAFPServerSignature`.
    package static let afpServerSignature = AttributeName("afps")
    /// `kSecAttrCRLType`.
    package static let crlType = AttributeName("crlt")
    /// `kSecAttrCRLEncoding`.
    package static let crlEncoding = AttributeName("crle")
    /// `kSecAttrDeriveSyncIDFromItemAttributes`.
    package static let deriveSyncIDFromItemAttributes = AttributeName("dspk")
    /// `kSecAttrAppClipItem`.
    package static let appClipItem = AttributeName("clip")
    /// The protection blob of SecItemSchema.c (no public constant).
    package static let protection = AttributeName("prot")
    /// Keyhaven's own: tells apart Secret Service items that share the rest of their primary key;
    /// never a caller's to give or see.
    package static let secretServiceDiscriminator = AttributeName("khdc")

    /// Every name above.
    package static let all: [AttributeName] = [
        .accessible, .accessControl, .accessGroup, .creationDate, .modificationDate, .description, .comment, .creator,
        .type, .label, .isInvisible, .isNegative, .account, .service, .generic, .securityDomain, .server, .protocol,
        .authenticationType, .port, .path, .alias, .subject, .issuer, .serialNumber, .subjectKeyID, .publicKeyHash,
        .certificateType, .certificateEncoding, .keyClass, .applicationLabel, .isPermanent, .isPrivate, .isModifiable,
        .applicationTag, .keySizeInBits, .effectiveKeySize, .startDate, .endDate, .isSensitive, .wasAlwaysSensitive,
        .isExtractable, .wasNeverExtractable, .canEncrypt, .canDecrypt, .canDerive, .canSign, .canVerify,
        .canSignRecover, .canVerifyRecover, .canWrap, .canUnwrap, .syncViewHint, .tokenID, .scriptCode, .hasCustomIcon,
        .synchronizable, .tombstone, .multiUser, .noLegacy, .tokenOID, .sysBound, .sha1, .sharingGroup,
        .pcsPlaintextServiceIdentifier, .pcsPlaintextPublicKey, .pcsPlaintextPublicIdentity, .volume, .address,
        .afpServerSignature, .crlType, .crlEncoding, .deriveSyncIDFromItemAttributes, .appClipItem, .protection,
        .secretServiceDiscriminator,
    ]
}

extension Dictionary where Key == String, Value == AttributeValue {
    /// The attribute of that name.
    package subscript(_ name: AttributeName) -> AttributeValue? {
        get { self[name.code] }
        set { self[name.code] = newValue }
    }

    /// Attributes given by name: `.named([.service: .string("mail"), .account: .string("ada")])`.
    package static func named(_ pairs: KeyValuePairs<AttributeName, AttributeValue>) -> Self {
        var attributes: Self = [:]
        for (name, value) in pairs { attributes[name.code] = value }
        return attributes
    }
}

extension Dictionary where Key == String, Value == Any {
    /// The attribute of that name in an attribute dictionary of Apple's shape.
    package subscript(_ name: AttributeName) -> Any? {
        get { self[name.code] }
        set { self[name.code] = newValue }
    }
}
