/// The data `ssh` asks a key to sign to log in (RFC 4252, section 7; OpenSSH's
/// `publickey-hostbound-v00@openssh.com`): what a destination-restricted key may sign, and
/// nothing else.
struct UserAuthRequest: Sendable {
    let sessionID: [UInt8]
    let user: String
    /// The destination's host key (or certificate) as the client names it, in a host-bound request.
    let hostKeyBlob: [UInt8]?

    /// Reads `data` as a userauth request for the key `keyBlob`; nil when it is anything else.
    init?(_ data: [UInt8], keyBlob: [UInt8]) {
        var reader = SSHReader(data)
        guard let sessionID = try? reader.string(), !sessionID.isEmpty,
              (try? reader.byte()) == 50,  // SSH_MSG_USERAUTH_REQUEST
              let user = try? reader.text(), (try? reader.text()) == "ssh-connection",
              let method = try? reader.text(), (try? reader.bool()) == true,
              let algorithm = try? reader.text(), (try? reader.string()) == keyBlob,
              Self.algorithm(algorithm, fits: keyBlob) else { return nil }
        var hostKeyBlob: [UInt8]?
        switch method {
        case "publickey-hostbound-v00@openssh.com":
            guard let blob = try? reader.string() else { return nil }
            hostKeyBlob = blob
        case "publickey":
            break
        default:
            return nil
        }
        guard reader.isAtEnd else { return nil }
        (self.sessionID, self.user, self.hostKeyBlob) = (sessionID, user, hostKeyBlob)
    }

    /// Whether a signature algorithm's name is one of the key's type (RSA keys sign as
    /// `rsa-sha2-256` and `rsa-sha2-512` too).
    static func algorithm(_ algorithm: String, fits keyBlob: [UInt8]) -> Bool {
        var reader = SSHReader(keyBlob)
        guard let type = try? reader.text() else { return false }
        switch type {
        case "ssh-rsa": return ["ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"].contains(algorithm)
        case "ssh-rsa-cert-v01@openssh.com":
            return ["ssh-rsa-cert-v01@openssh.com", "rsa-sha2-256-cert-v01@openssh.com", "rsa-sha2-512-cert-v01@openssh.com"].contains(algorithm)
        default: return algorithm == type
        }
    }
}
