// `import Security`, as Apple-platform code writes it, on Linux: the Keychain Services mirror.
// This module exists only on Linux (see Package.swift); on Apple platforms `Security` is Apple's.
@_exported import KeychainServices
