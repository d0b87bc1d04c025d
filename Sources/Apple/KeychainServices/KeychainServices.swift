// KeychainServices on Apple platforms: Apple's own Keychain Services. The keychain there is the
// system's (securityd, iCloud Keychain, the Secure Enclave); Keyhaven builds none of its engine, as
// swift-crypto's Crypto re-exports CryptoKit. Code that imports KeychainServices, and the Keyhaven
// module over it, runs against the real keychain unchanged.
@_exported import Security
