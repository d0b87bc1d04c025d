import Crypto
import Foundation
import Testing
import KeychainStore

/// A program's application group (docs/access.md, "the executable's file name and 64 bits of
/// SHA-256 of its path"): items are stored under it, so it must not change.
struct ApplicationGroupTests {
    @Test("An application group is the file name, a dot, and the first 8 bytes of SHA-256 of the path in hexadecimal")
    func nameAndDigest() {
        for path in ["/usr/bin/git", "/home/someone/.local/bin/tool with space", "/opt/é/app"] {
            let expected = SHA256.hash(data: Data(path.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined()
            let name = String(path.split(separator: "/").last!)
            #expect(ApplicationIdentityReader.applicationGroup(path: path) == name + "." + expected)
        }
        #expect(ApplicationIdentityReader.applicationGroup(path: "") == "keyhaven.default")
    }
}
