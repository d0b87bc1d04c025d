import FoundationEssentials
import Synchronization

/// The access groups of this process (Apple's entitlements, read in `SecItemServer.c`), Linux's stand-in for signed entitlements.
///
/// In order of precedence: the list set with `SecAccessGroupsSetCurrent`; else
/// `KEYHAVEN_ACCESS_GROUPS` (comma-separated, read at first use); else the program's application
/// group (``ApplicationIdentityReader/applicationGroup(path:)``: its file name and a digest of its
/// path, the group the agent gives the program). The first group is where adds go by default.
/// Through the agent, a list is a request: the agent grants each group per program.
package enum AccessGroupConfiguration {
    private static let explicit = Mutex<[String]?>(nil)
    private static let fromEnvironment: [String]? = {
        guard let raw = ProcessInfo.processInfo.environment["KEYHAVEN_ACCESS_GROUPS"] else { return nil }
        return raw.split(separator: ",").map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
    }()

    /// The caller this process acts as.
    package static func currentCaller() -> Caller {
        var caller = Caller(accessGroups: current(), interactionAllowed: interactionAllowed.withLock { $0 })
        caller.presenceReuse = presenceReuse.withLock { $0 }
        return caller
    }

    /// `SecUserPresenceSetReuseDuration`: seconds one password entry serves (at most 300).
    package static let presenceReuse = Mutex<UInt32>(0)

    /// `SecKeychainSetUserInteractionAllowed`: whether the agent may prompt for this process.
    package static let interactionAllowed = Mutex(true)

    package static func current() -> [String] {
        if let groups = explicit.withLock({ $0 }) { return groups }
        if let groups = fromEnvironment { return groups }
        return [defaultGroup]
    }

    /// Sets the list for the rest of the process's life (or until set again); nil restores the
    /// environment/default list.
    package static func set(_ groups: [String]?) {
        explicit.withLock { $0 = groups }
    }

    /// The program's application group, standing in for an application identifier.
    package static let defaultGroup: String = ApplicationIdentityReader.applicationGroup(path: ApplicationIdentityReader.currentPath)
}
