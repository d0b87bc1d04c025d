/// Whether a host is this machine's loopback: 127.0.0.0/8, ::1 (with or without brackets) or
/// localhost. The server speaks plain HTTP only there, and a device talks plain HTTP only to it.
package enum Loopback {
    package static func contains(_ host: String) -> Bool {
        if host == "localhost" || host == "::1" || host == "[::1]" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }
}
