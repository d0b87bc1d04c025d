import KeychainModel
import KeyhavenAgentClient

/// What every subcommand needs: the agent session (``AgentSession``), and on a person's first
/// command the notice that the default keychain has no password.
package typealias Session = AgentSession

extension AgentSession {
    /// `notice`: whether a command run by a person may say that the default keychain has no password.
    package static func open(notice: Bool = true) throws(StoreError) -> AgentSession {
        let session = try connect()
        if notice { FirstUseNotice.showIfNeeded(session) }
        return session
    }
}
