import Foundation
import KeychainModel
import KeychainTestSupport
import KeyhavenAgentClient
import Testing

/// A Secure Enclave key's TPM object asks for its authorization (docs/tpm.md): the blob alone,
/// sent to the agent or used on the TPM directly, signs nothing.
@Suite(.freshKeychain(), .serialized)
struct SecureEnclaveAuthorizationTests {
    @Test("A Secure Enclave key's blob alone signs nothing: the agent refuses it without the key's authorization, as does the TPM itself; with it, the maker's key signs")
    func blobAloneSignsNothing() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        let agent = try TestAgent.start(extraEnvironment: ["KEYHAVEN_TPM": tpm.tcti])
        var running = true
        defer { if running { agent.stop() } }
        let client = try AgentClient(socket: AgentSocket(path: agent.runtime + "/keyhaven/agent.sock"))
        let key = try client.send(.createEnclaveKey).enclaveKey()
        #expect(key.authorization.count == 32)
        #expect(!"\(key)".contains("\(key.authorization)"))
        let digest = [UInt8](repeating: 7, count: 32)
        var request = KeyOperationRequest(.sign, reference: .rowID(.key, 0))
        request.algorithm = "algid:sign:ECDSA:digest-X962:SHA256"
        request.input = Data(digest)
        #expect(try client.send(.enclaveKeyOperation(key: key, request: request)).bytes().isEmpty == false, "the maker signs")
        for forged in [[], [UInt8](repeating: 0, count: 32)] {
            var blobAlone = key
            blobAlone.authorization = forged
            do {
                _ = try client.send(.enclaveKeyOperation(key: blobAlone, request: request))
                Issue.record("the agent signed with a blob and \(forged.count) bytes of authorization")
            } catch {
                #expect(error.code == .authFailed && error.message.contains("authorization"), "\(error)")
            }
        }
        // Without the agent (swtpm serves one connection at a time): another program on the TPM
        // itself, which asks too.
        agent.stop()
        running = false
        func signOnTPM(_ authorization: [UInt8]) throws -> String {
            let parts = [Array(key.object.publicArea), Array(key.object.privateArea), authorization].map(Self.hex)
            return HelperProcess.finish(try HelperProcess.start(["tpm-sign", tpm.tcti] + parts)).1
        }
        #expect(try signOnTPM([]).hasPrefix("refused "))
        #expect(try signOnTPM([UInt8](repeating: 1, count: 32)).hasPrefix("refused "))
        #expect(try signOnTPM(key.authorization) == "signed 64")
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String($0 >> 4, radix: 16) + String($0 & 15, radix: 16) }.joined()
    }
}
