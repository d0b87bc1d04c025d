import Foundation
import Keyhaven
import KeychainTestSupport
import Testing

/// The README's Keyhaven example, as written there, must compile and work.
@Suite(.freshKeychain())
struct ReadmeExampleTests {
    @Test("README: the Swift API example")
    func readmeExample() throws {
        // --- README example begins ---
        let keychain = Keychain(service: "com.example.app")
        try keychain.set("s3cret", forKey: "api-token")
        let token = try keychain.string(forKey: "api-token")          // "s3cret"

        struct Session: Codable { var user: String; var expires: Date }
        try keychain.set(Session(user: "alice", expires: .distantFuture), forKey: "session")
        let session = try keychain.value(Session.self, forKey: "session")

        keychain["api-token"] = nil                                     // removes it
        try Keychain.setPassword("hunter2", forService: "db", account: "admin")   // SAMKeychain style
        // --- README example ends ---
        #expect(token == "s3cret")
        #expect(session?.user == "alice")
        #expect(try keychain.string(forKey: "api-token") == nil)
        #expect(try Keychain.password(forService: "db", account: "admin") == "hunter2")
    }
}
