// KeychainServicesExtras on Apple platforms: nothing but KeychainServices. Its Linux additions
// (SecAccessGroupsSetCurrent, the keychain home, SecKeychainBackup) have no Apple counterpart:
// access groups come from signed entitlements there. Code that uses them is Linux code
// (`#if os(Linux)`).
@_exported import KeychainServices
