import NIOCore

/// Who a request counts as for the rate limits and the body budget: an IPv4 address as it is,
/// an IPv6 address by its /64 (one host or one site usually has a whole /64, and picks any
/// address in it at will), an IPv4-mapped IPv6 address as its IPv4 address.
package enum ClientKey {
    package static func of(_ address: String) -> String {
        guard address.contains(":"), let parsed = try? SocketAddress(ipAddress: address, port: 0), case .v6(let v6) = parsed else {
            return address
        }
        let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
        if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xff, bytes[11] == 0xff {
            return bytes[12...].map(String.init).joined(separator: ".")
        }
        let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        return groups.joined(separator: ":") + "::/64"
    }
}
