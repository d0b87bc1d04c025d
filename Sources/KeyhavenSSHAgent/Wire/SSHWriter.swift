/// Writes the SSH wire encoding (RFC 4251, section 5).
package struct SSHWriter: Sendable {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// Room for `capacity` bytes at once, so that writing private fields never leaves a copy of
    /// them behind in memory a growing buffer gave back.
    package init(capacity: Int) { bytes.reserveCapacity(capacity) }

    package mutating func byte(_ value: UInt8) { bytes.append(value) }
    package mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    package mutating func uint32(_ value: UInt32) {
        bytes.append(contentsOf: [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16),
                                  UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value)])
    }

    package mutating func string(_ value: some Collection<UInt8>) {
        uint32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    package mutating func text(_ value: String) { string(Array(value.utf8)) }

    /// A non-negative integer from its big-endian magnitude: leading zeros dropped, and one zero
    /// byte put back where the top bit is set, so that it does not read as negative.
    package mutating func mpint(_ magnitude: some Collection<UInt8>) {
        let trimmed = magnitude.drop { $0 == 0 }
        if let first = trimmed.first, first & 0x80 != 0 {
            string([0] + trimmed)
        } else {
            string(Array(trimmed))
        }
    }
}
