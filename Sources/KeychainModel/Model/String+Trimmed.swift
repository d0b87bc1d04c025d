extension String {
    /// Without white space at either end (what a name typed into a field means, a TPM's padded
    /// vendor string).
    package var trimmed: String { String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed()) }
}
