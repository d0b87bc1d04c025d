extension String {
    /// The bytes as text if they are valid UTF-8; nil otherwise (never repaired).
    ///
    /// Decoded with `String(decoding:as:)` and compared with the input: invalid input comes out
    /// repaired, so it differs. This takes about half the time of `String(validating:as:)` (74-80
    /// against 133-160 ns for texts of 4 to 45 bytes, the result's allocation included), whose
    /// generic validation looks up type metadata at run time on every call (docs/benchmarks.md,
    /// "The agent protocol's codec").
    package init?(exactUTF8 bytes: ArraySlice<UInt8>) {
        var text = String(decoding: bytes, as: UTF8.self)
        let same = text.withUTF8 { decoded in
            bytes.withUnsafeBufferPointer { input in decoded.count == input.count && decoded.elementsEqual(input) }
        }
        guard same else { return nil }
        self = text
    }
}
