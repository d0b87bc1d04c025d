import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// SecTrust and SecPolicy against chains the `openssl` command makes (a root, an intermediate and
/// a TLS leaf; another root; a self-signed certificate), each verdict cross-checked with
/// `openssl verify` given the same anchors, date and host.
@Suite(.enabled(if: KeyTest.hasOpenSSL, "needs the openssl command (scripts/bootstrap installs it)"))
struct TrustTests {
    /// The test PKI, in a fresh folder: root, inter, leaf, other (another root), self (self-signed);
    /// each as NAME.pem and NAME.der.
    final class PKI: Sendable {
        let folder: String
        /// When the leaf became valid (the moment it was made, to the second).
        let made: Date

        init() throws {
            folder = try TemporaryFolder.make(prefix: "keyhaven-trust")
            made = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
            let script = """
                set -eu
                cd '\(folder)'
                cat > ext.cnf <<'EOF'
                [ca]
                basicConstraints=critical,CA:true
                keyUsage=critical,keyCertSign,cRLSign
                [leaf]
                basicConstraints=CA:false
                keyUsage=critical,digitalSignature
                extendedKeyUsage=serverAuth
                subjectAltName=DNS:www.example.test,DNS:*.wild.example.test,IP:127.0.0.1
                EOF
                key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }
                root() {
                    key "$1"
                    openssl req -x509 -key "$1.key" -subj "/CN=$2" -days 3650 -addext 'basicConstraints=critical,CA:true' \\
                        -addext 'keyUsage=critical,keyCertSign,cRLSign' -out "$1.pem"
                }
                signed() {  # NAME CN ISSUER SECTION DAYS
                    key "$1"
                    openssl req -new -key "$1.key" -subj "/CN=$2" -out "$1.csr"
                    openssl x509 -req -in "$1.csr" -CA "$3.pem" -CAkey "$3.key" -set_serial "0x$(openssl rand -hex 8)" -days "$5" \\
                        -extfile ext.cnf -extensions "$4" -out "$1.pem" 2>/dev/null
                }
                root root 'Keyhaven Test Root'
                root other 'Keyhaven Other Root'
                signed inter 'Keyhaven Test Intermediate' root ca 1825
                signed leaf 'www.example.test' inter leaf 365
                key self
                openssl req -x509 -key self.key -subj '/CN=self.example.test' -days 365 -addext 'subjectAltName=DNS:self.example.test' -out self.pem
                cat inter.pem root.pem > inter-and-root.pem
                for name in root other inter leaf self; do openssl x509 -in "$name.pem" -outform DER -out "$name.der"; done
                """
            try script.write(toFile: folder + "/pki.sh", atomically: true, encoding: .utf8)
            let result = try CommandRunner.execute("/bin/bash", [folder + "/pki.sh"], environment: ProcessInfo.processInfo.environment)
            guard result.status == 0 else { throw TestFailure("the test PKI could not be made: \(result.error)") }
        }

        deinit { try? FileManager.default.removeItem(atPath: folder) }

        func certificate(_ name: String) throws -> SecCertificate {
            let der = try Data(contentsOf: URL(fileURLWithPath: folder + "/\(name).der"))
            return try #require(SecCertificateCreateWithData(nil, der as CFData))
        }

        /// `openssl verify`'s verdict: 0 for OK, else the first error number it printed.
        func opensslVerify(_ arguments: [String]) throws -> Int {
            let result = try CommandRunner.execute("/usr/bin/env", ["openssl", "verify"] + arguments.map { $0.hasSuffix(".pem") ? folder + "/" + $0 : $0 },
                                                   environment: ProcessInfo.processInfo.environment)
            if result.status == 0 { return 0 }
            let text = result.output + result.error
            guard let range = text.range(of: #"error (\d+) at"#, options: .regularExpression) else { return -1 }
            return Int(text[range].split(separator: " ")[1]) ?? -1
        }
    }

    struct TestFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// One evaluation: the certificates (leaf first), the anchors (nil: the system's roots alone),
    /// the host (nil: the basic X.509 policy), the date as days from the leaf's making; what
    /// SecTrust must give (0 when trusted) and what `openssl verify` must say (0 for OK, else its
    /// error number).
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let certificates: [String]
        let anchors: [String]?
        let host: String?
        let days: Double
        let status: OSStatus
        let openssl: Int

        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "valid", certificates: ["leaf", "inter"], anchors: ["root"], host: "www.example.test", days: 0, status: 0, openssl: 0),
        Case(name: "expired", certificates: ["leaf", "inter"], anchors: ["root"], host: "www.example.test", days: 400,
             status: errSecCertificateExpired, openssl: 10),
        Case(name: "not yet valid", certificates: ["leaf", "inter"], anchors: ["root"], host: "www.example.test", days: -2,
             status: errSecCertificateExpired, openssl: 9),
        Case(name: "wrong host", certificates: ["leaf", "inter"], anchors: ["root"], host: "other.example.test", days: 0,
             status: errSecHostNameMismatch, openssl: 62),
        Case(name: "wildcard host", certificates: ["leaf", "inter"], anchors: ["root"], host: "api.wild.example.test", days: 0, status: 0, openssl: 0),
        Case(name: "wildcard covers one label only", certificates: ["leaf", "inter"], anchors: ["root"], host: "a.b.wild.example.test", days: 0,
             status: errSecHostNameMismatch, openssl: 62),
        Case(name: "IP address", certificates: ["leaf", "inter"], anchors: ["root"], host: "127.0.0.1", days: 0, status: 0, openssl: 0),
        Case(name: "missing intermediate", certificates: ["leaf"], anchors: ["root"], host: "www.example.test", days: 0,
             status: errSecCreateChainFailed, openssl: 20),
        Case(name: "self-signed, system roots", certificates: ["self"], anchors: nil, host: nil, days: 0, status: errSecNotTrusted, openssl: 18),
        Case(name: "self-signed, its own anchor", certificates: ["self"], anchors: ["self"], host: nil, days: 0, status: 0, openssl: 0),
        Case(name: "anchors only: another root", certificates: ["leaf", "inter", "root"], anchors: ["other"], host: "www.example.test", days: 0,
             status: errSecNotTrusted, openssl: 19),
        Case(name: "an intermediate as the anchor", certificates: ["leaf"], anchors: ["inter"], host: "www.example.test", days: 0, status: 0, openssl: 0),
    ]

    @Test("SecTrustEvaluateWithError gives Apple's code for each chain, and openssl verify agrees", arguments: cases)
    func verdicts(_ c: Case) throws {
        let pki = try PKI()
        let date = pki.made.addingTimeInterval(c.days * 86_400 + (c.days == 0 ? 60 : 0))
        let policy = c.host.map { SecPolicyCreateSSL(true, $0 as CFString) } ?? SecPolicyCreateBasicX509()
        var trust: SecTrust?
        #expect(SecTrustCreateWithCertificates(try c.certificates.map(pki.certificate) as CFArray, policy, &trust) == errSecSuccess)
        let evaluated = try #require(trust)
        if let anchors = c.anchors { #expect(SecTrustSetAnchorCertificates(evaluated, try anchors.map(pki.certificate) as CFArray) == errSecSuccess) }
        #expect(SecTrustSetVerifyDate(evaluated, date as CFDate) == errSecSuccess)
        var error: CFError?
        let trusted = SecTrustEvaluateWithError(evaluated, &error)
        #expect(trusted == (c.status == 0), "\(c.name): \(error.map { "\($0)" } ?? "trusted")")
        #expect((error.map { OSStatus($0.code) } ?? 0) == c.status, "\(c.name): \(error.map { "\($0)" } ?? "trusted")")
        if let error { #expect(error.domain == "NSOSStatusErrorDomain" && !error.localizedDescription.isEmpty) }
        var result = SecTrustResultType.invalid
        #expect(SecTrustGetTrustResult(evaluated, &result) == errSecSuccess)
        #expect(result == (c.status == 0 ? .unspecified : .recoverableTrustFailure), "\(c.name): \(result)")
        // The same question put to openssl verify.
        var arguments = ["-attime", String(Int(date.timeIntervalSince1970))]
        if let anchors = c.anchors {
            arguments += ["-CAfile", anchors[0] + ".pem", "-partial_chain"]
        } else {
            arguments += ["-CApath", "/etc/ssl/certs"]
        }
        let intermediates = c.certificates.dropFirst()
        if !intermediates.isEmpty { arguments += ["-untrusted", intermediates.count == 2 ? "inter-and-root.pem" : intermediates.first! + ".pem"] }
        if let host = c.host {
            arguments += ["-purpose", "sslserver"] + (host.first!.isNumber ? ["-verify_ip", host] : ["-verify_hostname", host])
        }
        #expect(try pki.opensslVerify(arguments + [c.certificates[0] + ".pem"]) == c.openssl, "\(c.name): openssl verify \(arguments)")
    }

    @Test("A valid chain: its certificates leaf to root, the leaf's key, the result dictionary; an evaluation is kept until a setting changes")
    func chainAndResult() throws {
        let pki = try PKI()
        let (leaf, inter, root) = (try pki.certificate("leaf"), try pki.certificate("inter"), try pki.certificate("root"))
        var trust: SecTrust?
        #expect(SecTrustCreateWithCertificates([leaf, inter] as CFArray, SecPolicyCreateSSL(true, "www.example.test" as CFString), &trust) == 0)
        let t = try #require(trust)
        var result = SecTrustResultType.proceed
        #expect(SecTrustGetTrustResult(t, &result) == errSecSuccess && result == .invalid)  // not evaluated yet
        #expect(SecTrustSetAnchorCertificates(t, [root] as CFArray) == errSecSuccess)
        #expect(SecTrustGetCertificateCount(t) == 3)
        let chain = try #require(SecTrustCopyCertificateChain(t) as? [SecCertificate])
        #expect(chain == [leaf, inter, root])
        #expect(SecTrustCopyKey(t).map { SecKeyCopyExternalRepresentation($0, nil) as Data? } == SecCertificateCopyKey(leaf).map { SecKeyCopyExternalRepresentation($0, nil) as Data? })
        let dictionary = try #require(SecTrustCopyResult(t) as? [String: Any])
        #expect((dictionary[kSecTrustResultValue as String] as? NSNumber)?.uint32Value == SecTrustResultType.unspecified.rawValue)
        #expect((dictionary[kSecTrustRevocationChecked as String] as? NSNumber)?.boolValue == false)
        #expect(dictionary[kSecTrustEvaluationDate as String] is Date)
        #expect(SecTrustGetTrustResult(t, &result) == errSecSuccess && result == .unspecified)
        // A new policy drops the kept result.
        #expect(SecTrustSetPolicies(t, SecPolicyCreateSSL(true, "nowhere.example.test" as CFString)) == errSecSuccess)
        #expect(SecTrustGetTrustResult(t, &result) == errSecSuccess && result == .invalid)
        var error: CFError?
        #expect(!SecTrustEvaluateWithError(t, &error) && error?.code == Int(errSecHostNameMismatch))
        #expect(error?.localizedDescription == "“www.example.test” certificate name does not match input")
        var policies: CFArray?
        #expect(SecTrustCopyPolicies(t, &policies) == errSecSuccess && (policies as? [SecPolicy])?.count == 1)
    }

    @Test("Anchors replace the system's roots until SecTrustSetAnchorCertificatesOnly(false); a system root is trusted with no anchors set")
    func anchorsAndSystemRoots() throws {
        let pki = try PKI()
        var trust: SecTrust?
        #expect(SecTrustCreateWithCertificates(try pki.certificate("self"), nil, &trust) == 0)
        let t = try #require(trust)
        #expect(SecTrustSetAnchorCertificates(t, [try pki.certificate("self")] as CFArray) == 0)
        #expect(SecTrustEvaluateWithError(t, nil))
        // Only the anchors set: the system's roots do not count, so one of them is not trusted.
        let systemRoot = try #require(Self.systemRoot(), "the system's roots are in /etc/ssl/certs (ca-certificates)")
        var system: SecTrust?
        #expect(SecTrustCreateWithCertificates(systemRoot, SecPolicyCreateBasicX509(), &system) == 0)
        let s = try #require(system)
        #expect(SecTrustEvaluateWithError(s, nil), "a root in /etc/ssl/certs is trusted with no anchors set")
        #expect(SecTrustSetAnchorCertificates(s, [try pki.certificate("self")] as CFArray) == 0)
        var error: CFError?
        #expect(!SecTrustEvaluateWithError(s, &error) && error?.code == Int(errSecNotTrusted))
        #expect(SecTrustSetAnchorCertificatesOnly(s, false) == 0)
        #expect(SecTrustEvaluateWithError(s, nil))
        var anchors: CFArray?
        #expect(SecTrustCopyCustomAnchorCertificates(s, &anchors) == 0 && (anchors as? [SecCertificate])?.count == 1)
    }

    /// A root certificate of the system's store.
    static func systemRoot() -> SecCertificate? {
        let folder = "/etc/ssl/certs"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return nil }
        for name in names.sorted() where name.hasSuffix(".pem") {
            guard let pem = try? String(contentsOfFile: folder + "/" + name, encoding: .utf8) else { continue }
            let body = pem.components(separatedBy: "\n").filter { !$0.hasPrefix("-----") }.joined()
            if let der = Data(base64Encoded: body), let certificate = SecCertificateCreateWithData(nil, der as CFData) { return certificate }
        }
        return nil
    }

    @Test("Revocation: not checked (no answer is fetched), which fails only a policy that requires a positive answer")
    func revocation() throws {
        let pki = try PKI()
        let ssl = SecPolicyCreateSSL(true, "www.example.test" as CFString)
        for (flags, status) in [(kSecRevocationUseAnyAvailableMethod, errSecSuccess),
                                (kSecRevocationUseAnyAvailableMethod | kSecRevocationRequirePositiveResponse, errSecIncompleteCertRevocationCheck)] {
            var trust: SecTrust?
            let revocation = try #require(SecPolicyCreateRevocation(flags))
            #expect(SecTrustCreateWithCertificates([try pki.certificate("leaf"), try pki.certificate("inter")] as CFArray, [ssl, revocation] as CFArray, &trust) == 0)
            let t = try #require(trust)
            #expect(SecTrustSetAnchorCertificates(t, [try pki.certificate("root")] as CFArray) == 0)
            var error: CFError?
            #expect(SecTrustEvaluateWithError(t, &error) == (status == errSecSuccess))
            #expect((error.map { OSStatus($0.code) } ?? errSecSuccess) == status)
        }
    }

    @Test("SecTrustEvaluateAsyncWithError answers on the queue given, as the synchronous call would")
    func asynchronous() async throws {
        let pki = try PKI()
        var trust: SecTrust?
        #expect(SecTrustCreateWithCertificates([try pki.certificate("leaf")] as CFArray, SecPolicyCreateSSL(true, "www.example.test" as CFString), &trust) == 0)
        let t = try #require(trust)
        let queue = DispatchQueue(label: "keyhaven.trust-test")
        queue.setSpecific(key: Self.queueKey, value: "trust")
        let answer: (Bool, Int?, Bool) = await withCheckedContinuation { continuation in
            #expect(SecTrustEvaluateAsyncWithError(t, queue, { _, trusted, error in
                continuation.resume(returning: (trusted, error?.code, DispatchQueue.getSpecific(key: Self.queueKey) == "trust"))
            }) == errSecSuccess)
        }
        #expect(answer.0 == false && answer.1 == Int(errSecCreateChainFailed) && answer.2)
    }

    static let queueKey = DispatchSpecificKey<String>()

    @Test("Bad input is errSecParam and makes no trust")
    func badInput() {
        var trust: SecTrust?
        #expect(SecTrustCreateWithCertificates("not a certificate" as CFString, nil, &trust) == errSecParam && trust == nil)
        #expect(SecTrustCreateWithCertificates([] as CFArray, nil, &trust) == errSecParam && trust == nil)
        #expect(SecTrustCreateWithCertificates(["x"] as CFArray, nil, &trust) == errSecParam && trust == nil)
    }
}
