#if canImport(Glibc)
import Glibc
#endif
import Foundation
import KeychainModel
import KeyhavenAgentClient

/// `keyhaven-test-helper exec-hold ACCOUNT PROGRAM`: reads the item `ACCOUNT` (service "access")
/// through its own connection to the agent, whatever the answer (the agent has then identified
/// this program), then runs PROGRAM in its place (execve) with that connection left open:
/// `PROGRAM adopt FD ACCOUNT` sends the same read on it, without a prompt, and prints `status N`
/// (and `data TEXT`). The agent must not take PROGRAM for the program that connected, nor trust
/// requests on that connection as PROGRAM's (docs/access.md).
func runExecHold(account: String, program: String) -> Never {
    do {
        let home = try KeychainHome.current()
        let client = try AgentClient(socket: AgentSocket.current(), home: home.path)
        _ = try client.exchange(read(account, home: home))
        let fd = client.detach()
        _ = fcntl(fd, F_SETFD, 0)  // kept across execve
        let arguments = [program, "adopt", String(fd), account]
        let cArguments = arguments.map { strdup($0) } + [nil]
        execv(program, cArguments)
        print("status \(errno)")
    } catch {
        print("status \(error.code.appleStatus)")
    }
    exit(1)
}

func runAdopt(fd: Int32, account: String) -> Never {
    do {
        let home = try KeychainHome.current()
        let client = AgentClient(adopting: fd, home: home.path)
        switch try client.exchange(read(account, home: home)) {
        case .failure(let error):
            print("status \(error.code.appleStatus)")
        case .answer(let answer):
            print("status 0")
            if let secret = try answer.items().first?.secret { print("data \(String(decoding: secret, as: UTF8.self))") }
        }
    } catch {
        print("status \(error.code.appleStatus)")
    }
    exit(0)
}

private func read(_ account: String, home: KeychainHome) -> AgentRequest {
    var query = ItemQuery(itemClass: .genericPassword)
    query.criteria = ["svce": .string("access"), "acct": .string(account)]
    let groups = ProcessInfo.processInfo.environment["KEYHAVEN_ACCESS_GROUPS"].map { [$0] } ?? []
    return .find(keychains: [home.defaultKeychainPath], query: query,
                 caller: Caller(accessGroups: groups, interactionAllowed: false), withSecrets: true)
}
