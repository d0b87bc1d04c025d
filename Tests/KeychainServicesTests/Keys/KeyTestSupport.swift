import Crypto
import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// Small helpers for the SecKey tests: creating keys, and running the real `openssl` on files.
enum KeyTest {
    static func randomKey(_ type: CFString, _ bits: Int, extra: [String: Any] = [:]) throws -> SecKey {
        var parameters: [String: Any] = [kSecAttrKeyType as String: type, kSecAttrKeySizeInBits as String: bits]
        parameters.merge(extra) { $1 }
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error) else {
            throw error!.takeRetainedValue()
        }
        return key
    }

    static func data(_ key: SecKey) throws -> Data {
        var error: Unmanaged<CFError>?
        guard let data = SecKeyCopyExternalRepresentation(key, &error) else { throw error!.takeRetainedValue() }
        return data as Data
    }

    static func key(_ data: Data, type: CFString, isPrivate: Bool) throws -> SecKey {
        let attributes: [String: Any] = [kSecAttrKeyType as String: type,
                                         kSecAttrKeyClass as String: isPrivate ? kSecAttrKeyClassPrivate : kSecAttrKeyClassPublic]
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateWithData(data as CFData, attributes as CFDictionary, &error) else {
            throw error!.takeRetainedValue()
        }
        return key
    }

    /// The status code of a failed call's `CFError`, and its domain.
    static func status(_ error: Unmanaged<CFError>?) -> (domain: String, code: Int)? {
        guard let error = error?.takeRetainedValue() else { return nil }
        return (error.domain, error.code)
    }

    /// Runs the machine's `openssl` with `arguments` in `folder`; its exit status.
    @discardableResult
    static func openssl(_ arguments: [String], in folder: URL) throws -> Int32 {
        try Shell.run("/usr/bin/env", ["openssl"] + arguments.map { $0.hasPrefix("@") ? folder.appendingPathComponent(String($0.dropFirst())).path : $0 })
    }

    static var hasOpenSSL: Bool {
        (try? Shell.run("/usr/bin/env", ["sh", "-c", "command -v openssl"])) == 0
    }

    static func temporaryFolder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("keyhaven-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}
