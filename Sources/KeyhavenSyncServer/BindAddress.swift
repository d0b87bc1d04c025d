import KeyhavenSyncCore

/// `--bind HOST:PORT` (`[IPV6]:PORT` for IPv6), and whether the host is a loopback address: the
/// server speaks plain HTTP only there.
package struct ServerBindAddress: Sendable, CustomStringConvertible {
    package let host: String
    package let port: Int

    package init(_ text: String) throws(SyncServerError) {
        let host: Substring, port: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw Self.malformed }
            port = rest.dropFirst()
        } else {
            guard let colon = text.lastIndex(of: ":") else { throw Self.malformed }
            (host, port) = (text[..<colon], text[text.index(after: colon)...])
        }
        guard !host.isEmpty, let number = Int(port), (0...65_535).contains(number), port.allSatisfy(\.isNumber) else { throw Self.malformed }
        (self.host, self.port) = (String(host), number)
    }

    /// 127.0.0.0/8, ::1 or localhost.
    package var isLoopback: Bool { Loopback.contains(host) }

    package var description: String { Self.display(host, port) }

    /// `HOST:PORT`, the host in brackets when it is an IPv6 address.
    package static func display(_ host: String, _ port: Int) -> String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    private static var malformed: SyncServerError { SyncServerError(.badRequest, "--bind is HOST:PORT (or [IPV6]:PORT)") }
}
