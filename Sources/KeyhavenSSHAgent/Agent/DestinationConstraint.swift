/// One hop a key restricted with `ssh-add -h` may be used on (`restrict-destination-v00@openssh.com`,
/// OpenSSH's PROTOCOL.agent): from a host (none: the machine the agent runs on) to a host, each
/// named by its host keys, and the users the key may log in as there.
package struct DestinationConstraint: Sendable, Equatable {
    package struct Hop: Sendable, Equatable {
        /// The user pattern (`*` and `?`), at the "to" hop only; nil: any user.
        package let user: String?
        /// The host's name as the user gave it (nil for the origin).
        package let hostname: String?
        /// The host's keys, as blobs, each with whether it is a certificate authority's.
        package let keys: [(blob: [UInt8], isCA: Bool)]

        package static func == (lhs: Hop, rhs: Hop) -> Bool {
            lhs.user == rhs.user && lhs.hostname == rhs.hostname
                && lhs.keys.map(\.blob) == rhs.keys.map(\.blob) && lhs.keys.map(\.isCA) == rhs.keys.map(\.isCA)
        }

        /// Whether the host a binding names is this hop (OpenSSH's `match_key_hop`): its key is
        /// one of the hop's plain keys, or its certificate is signed by one of the hop's CA keys
        /// and valid now for the hop's host name.
        func matches(_ binding: SessionBinding) -> Bool {
            if let certificate = binding.certificate {
                return keys.contains { $0.isCA && $0.blob == certificate.signatureKey.blob } && certificate.isValid(forHost: hostname)
            }
            return keys.contains { !$0.isCA && $0.blob == binding.hostKeyBlob }
        }
    }

    package let from: Hop
    package let to: Hop

    /// The most constraints one key may carry, as OpenSSH's agent allows.
    static let maximumCount = 1024

    /// The constraints of a `restrict-destination-v00@openssh.com` extension's content. A
    /// malformed or inconsistent one (a "from" user, a "from" host without keys or keys without a
    /// host, a "to" without a host or keys, a non-empty reserved field) refuses the add.
    package static func read(_ content: [UInt8]) throws(SSHAgentError) -> [DestinationConstraint] {
        var reader = SSHReader(content)
        var constraints: [DestinationConstraint] = []
        while !reader.isAtEnd {
            guard constraints.count < maximumCount else { throw SSHAgentError(.malformed, "too many destination constraints") }
            var constraint = SSHReader(try reader.string())
            var fromReader = SSHReader(try constraint.string())
            var toReader = SSHReader(try constraint.string())
            guard try constraint.string().isEmpty else { throw SSHAgentError(.unsupported, "a destination constraint's extensions") }
            try constraint.finish()
            let from = try readHop(&fromReader)
            let to = try readHop(&toReader)
            guard from.user == nil, (from.hostname == nil) == from.keys.isEmpty else {
                throw SSHAgentError(.malformed, "an inconsistent \"from\" in a destination constraint")
            }
            guard to.hostname != nil, !to.keys.isEmpty else { throw SSHAgentError(.malformed, "an incomplete \"to\" in a destination constraint") }
            constraints.append(DestinationConstraint(from: from, to: to))
        }
        return constraints
    }

    private static func readHop(_ reader: inout SSHReader) throws(SSHAgentError) -> Hop {
        let user = try reader.text()
        let hostname = try reader.text()
        guard try reader.string().isEmpty else { throw SSHAgentError(.unsupported, "a destination hop's extensions") }
        var keys: [(blob: [UInt8], isCA: Bool)] = []
        while !reader.isAtEnd {
            let blob = try reader.string()
            keys.append((blob, try reader.bool()))
        }
        return Hop(user: user.isEmpty ? nil : user, hostname: hostname.isEmpty ? nil : hostname, keys: keys)
    }

    /// Whether one of `constraints` allows the hop from the host `fromKey` names (nil: the
    /// origin) to the one `toKey` names (nil: any) for `user` (nil: not checked).
    package static func permits(_ constraints: [DestinationConstraint], from fromKey: SessionBinding?, to toKey: SessionBinding?,
                                user: String?) -> Bool {
        constraints.contains { constraint in
            if let fromKey {
                guard constraint.from.matches(fromKey) else { return false }
            } else if constraint.from.hostname != nil || !constraint.from.keys.isEmpty {
                return false
            }
            if let toKey, !constraint.to.matches(toKey) { return false }
            if let pattern = constraint.to.user, let user, !Self.matches(user, pattern: pattern) { return false }
            return true
        }
    }

    /// OpenSSH's `match_pattern`: `*` any run, `?` any one character.
    static func matches(_ text: String, pattern: String) -> Bool {
        let (text, pattern) = (Array(text.unicodeScalars), Array(pattern.unicodeScalars))
        var (t, p) = (0, 0)
        // The last `*` seen and the text position it has swallowed up to.
        var star: (pattern: Int, text: Int)?
        while t < text.count {
            if p < pattern.count && (pattern[p] == "?" || pattern[p] == text[t]) {
                (t, p) = (t + 1, p + 1)
            } else if p < pattern.count && pattern[p] == "*" {
                star = (p, t)
                p += 1
            } else if let last = star {
                star = (last.pattern, last.text + 1)
                (p, t) = (last.pattern + 1, last.text + 1)
            } else {
                return false
            }
        }
        while p < pattern.count && pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
