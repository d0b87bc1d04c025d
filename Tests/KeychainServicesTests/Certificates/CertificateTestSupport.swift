import Foundation
import KeychainServices
import KeychainTestSupport

/// Certificates made by the machine's real `openssl` for the certificate tests.
enum CertificateTest {
    struct Made {
        let folder: URL
        var der: Data { (try? Data(contentsOf: folder.appendingPathComponent("cert.der"))) ?? Data() }
        /// The private key as Apple's external representation data is not needed; PEM for OpenSSL.
        var keyPEM: URL { folder.appendingPathComponent("key.pem") }
    }

    /// A self-signed certificate: `subject` (OpenSSL's `-subj` form), an EC P-256 or RSA key,
    /// optional subject alternative names (OpenSSL's `-addext` form), a fixed serial.
    static func make(subject: String, rsa: Bool = false, altNames: String? = nil, serial: String = "0x1234ABCD") throws -> Made {
        let folder = try KeyTest.temporaryFolder()
        let key = rsa ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        var arguments = ["req", "-x509", "-nodes"] + key + ["-keyout", "@key.pem", "-subj", subject, "-days", "30",
                                                             "-set_serial", serial, "-outform", "DER", "-out", "@cert.der"]
        if let altNames { arguments += ["-addext", "subjectAltName=\(altNames)"] }
        guard try KeyTest.openssl(arguments, in: folder) == 0 else { throw KeychainTestError.status(-1) }
        return Made(folder: folder)
    }
}
