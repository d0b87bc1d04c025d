/// Keychain item attribute tags: each is the four-character code of the attribute's wire name.
public enum SecItemAttr: FourCharCode, Sendable {
    case creationDateItemAttr = 0x6364_6174      // 'cdat'
    case modDateItemAttr = 0x6D64_6174           // 'mdat'
    case descriptionItemAttr = 0x6465_7363       // 'desc'
    case commentItemAttr = 0x6963_6D74           // 'icmt'
    case creatorItemAttr = 0x6372_7472           // 'crtr'
    case typeItemAttr = 0x7479_7065              // 'type'
    case scriptCodeItemAttr = 0x7363_7270        // 'scrp'
    case labelItemAttr = 0x6C61_626C             // 'labl'
    case invisibleItemAttr = 0x696E_7669         // 'invi'
    case negativeItemAttr = 0x6E65_6761          // 'nega'
    case customIconItemAttr = 0x6375_7369        // 'cusi'
    case accountItemAttr = 0x6163_6374           // 'acct'
    case serviceItemAttr = 0x7376_6365           // 'svce'
    case genericItemAttr = 0x6765_6E61           // 'gena'
    case securityDomainItemAttr = 0x7364_6D6E    // 'sdmn'
    case serverItemAttr = 0x7372_7672            // 'srvr'
    case authenticationTypeItemAttr = 0x6174_7970 // 'atyp'
    case portItemAttr = 0x706F_7274              // 'port'
    case pathItemAttr = 0x7061_7468              // 'path'
    case volumeItemAttr = 0x766C_6D65            // 'vlme'
    case addressItemAttr = 0x6164_6472           // 'addr'
    case signatureItemAttr = 0x7373_6967         // 'ssig'
    case protocolItemAttr = 0x7074_636C          // 'ptcl'
    case certificateType = 0x6374_7970           // 'ctyp'
    case certificateEncoding = 0x6365_6E63       // 'cenc'
    case crlType = 0x6372_7470                   // 'crtp'
    case crlEncoding = 0x6372_6E63               // 'crnc'
    case alias = 0x616C_6973                     // 'alis'
}

/// Internet password protocols, as four-character codes (the `kSecAttrProtocol` values).
public enum SecProtocolType: FourCharCode, Sendable {
    case FTP = 0x6674_7020, FTPAccount = 0x6674_7061, HTTP = 0x6874_7470, IRC = 0x6972_6320
    case NNTP = 0x6E6E_7470, POP3 = 0x706F_7033, SMTP = 0x736D_7470, SOCKS = 0x736F_7820
    case IMAP = 0x696D_6170, LDAP = 0x6C64_6170, appleTalk = 0x6174_6C6B, AFP = 0x6166_7020
    case telnet = 0x7465_6C6E, SSH = 0x7373_6820, FTPS = 0x6674_7073, HTTPS = 0x6874_7073
    case httpProxy = 0x6874_7078, httpsProxy = 0x6874_7378, ftpProxy = 0x6674_7078, CIFS = 0x6369_6673
    case SMB = 0x736D_6220, RTSP = 0x7274_7370, rtspProxy = 0x7274_7378, DAAP = 0x6461_6170
    case EPPC = 0x6570_7063, IPP = 0x6970_7020, NNTPS = 0x6E74_7073, LDAPS = 0x6C64_7073
    case telnetS = 0x7465_6C73, IMAPS = 0x696D_7073, IRCS = 0x6972_6373, POP3S = 0x706F_7073
    case cvsPserver = 0x6376_7370, SVN = 0x7376_6E20
    /// Matches any protocol in a search.
    case any = 0
}

/// Internet password authentication types, as four-character codes.
public enum SecAuthenticationType: FourCharCode, Sendable {
    case NTLM = 0x6E74_6C6D, MSN = 0x6D73_6E61, DPA = 0x6470_6161, RPA = 0x7270_6161
    case httpBasic = 0x6874_7470, httpDigest = 0x6874_7464, htmlForm = 0x666F_726D
    case `default` = 0x6466_6C74
    /// Matches any authentication type in a search.
    case any = 0
}

extension FourCharCode {
    /// The four characters of a code ('http' -> "http").
    var fourCharacterString: String {
        String(decoding: [UInt8(self >> 24), UInt8((self >> 16) & 0xFF), UInt8((self >> 8) & 0xFF), UInt8(self & 0xFF)],
               as: UTF8.self)
    }
}
