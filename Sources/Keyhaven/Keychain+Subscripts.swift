import Foundation

extension Keychain {
    /// The string stored under a key; setting nil removes it.
    ///
    /// Reading gives nil for a missing key and for a failure (a locked keychain, say); setting
    /// ignores failures. Use ``string(forKey:)`` and ``set(_:forKey:)-(String,_)`` to see errors.
    public subscript(key: String) -> String? {
        get { (try? string(forKey: key)) ?? nil }
        nonmutating set {
            if let newValue { try? set(newValue, forKey: key) } else { try? removeValue(forKey: key) }
        }
    }

    /// The data stored under a key; setting nil removes it. Failures as for ``subscript(_:)``.
    public subscript(data key: String) -> Data? {
        get { (try? data(forKey: key)) ?? nil }
        nonmutating set {
            if let newValue { try? set(newValue, forKey: key) } else { try? removeValue(forKey: key) }
        }
    }
}
