import KeychainStore

/// A failure inside the mirror, carrying the `OSStatus` the public function returns.
package struct SecStatusError: Error, Sendable {
    package let status: OSStatus
    package let reason: String

    package init(_ status: OSStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    package init(_ error: StoreError) {
        self.init(error.osStatus, error.message)
    }

    static func param(_ reason: String) -> SecStatusError { SecStatusError(errSecParam, reason) }
}

/// Runs one public call: any error becomes its `OSStatus`.
package func secCall(_ body: () throws(SecStatusError) -> Void) -> OSStatus {
    do {
        try body()
        return errSecSuccess
    } catch {
        return error.status
    }
}

/// Runs an engine call, converting its error.
package func engine<T>(_ body: () throws(StoreError) -> T) throws(SecStatusError) -> T {
    do { return try body() } catch { throw SecStatusError(error) }
}
