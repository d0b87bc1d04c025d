#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension String {
    /// The bytes as text if they are valid UTF-8; nil otherwise (never repaired).
    ///
    /// Decoded with `String(decoding:as:)` and compared with the input: invalid input comes out
    /// repaired, so it differs. This is faster than `String(validating:as:)`, whose generic
    /// validation looks up type metadata at run time on every call (docs/benchmarks.md, "The
    /// agent protocol's codec"). The comparison is `memcmp`: the sequence's generic
    /// `elementsEqual` walks the bytes through witness tables.
    package init?(exactUTF8 bytes: ArraySlice<UInt8>) {
        var text = String(decoding: bytes, as: UTF8.self)
        let same = text.withUTF8 { decoded in
            bytes.withUnsafeBufferPointer { input in
                guard decoded.count == input.count else { return false }
                guard let left = decoded.baseAddress, let right = input.baseAddress else { return true }
                return memcmp(left, right, input.count) == 0
            }
        }
        guard same else { return nil }
        self = text
    }

    /// Whether the two texts have the same UTF-8 bytes: not Unicode equivalence, which `==`
    /// gives. Compared with `memcmp`: the UTF-8 views' `elementsEqual` walks them a code unit at
    /// a time.
    package func hasSameUTF8(as other: String) -> Bool {
        var left = self, right = other
        guard left.utf8.count == right.utf8.count else { return false }
        return left.withUTF8 { a in
            right.withUTF8 { b in
                guard let x = a.baseAddress, let y = b.baseAddress else { return true }
                return memcmp(x, y, a.count) == 0
            }
        }
    }
}
