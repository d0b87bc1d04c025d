import Foundation
import KeychainServices
import KeychainStore

/// Sets this process's access groups, in order; the first is where items are added by default.
///
/// Linux has no signed entitlements, so a process declares its groups itself (the name is that of
/// Apple's own test interface). The list replaces the one from `KEYHAVEN_ACCESS_GROUPS` or the
/// default (the program's application group: its file name and a digest of its path). Include
/// `"*"` to see every group's items. Elements that are not strings are ignored. Through the agent
/// the list is a request: each group other than the program's own needs the user's grant
/// (docs/access.md).
public func SecAccessGroupsSetCurrent(_ accessGroups: CFArray) {
    let groups = accessGroups.compactMap { $0 as? String }
    AccessGroupConfiguration.set(groups)
}

/// This process's access groups, in order.
@discardableResult
public func SecAccessGroupsGetCurrent() -> CFArray {
    NSArray(array: AccessGroupConfiguration.current())
}
