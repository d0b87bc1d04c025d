import KeychainStore

/// A failure inside the mirror, carrying the `OSStatus` the public function returns.
struct SecStatusError: Error, Sendable {
    let status: OSStatus
    let reason: String

    init(_ status: OSStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }

    init(_ error: StoreError) {
        self.init(error.osStatus, error.message)
    }

    static func param(_ reason: String) -> SecStatusError { SecStatusError(errSecParam, reason) }
}

/// Runs one public call: any error becomes its `OSStatus`.
func secCall(_ body: () throws(SecStatusError) -> Void) -> OSStatus {
    do {
        try body()
        return errSecSuccess
    } catch {
        return error.status
    }
}

/// Runs an engine call, converting its error.
func engine<T>(_ body: () throws(StoreError) -> T) throws(SecStatusError) -> T {
    do { return try body() } catch { throw SecStatusError(error) }
}
