/// The release every program of this checkout is: `keyhaven --version` and
/// `keyhaven-sync-server --version` print it, and scripts/package names its packages with it.
package enum KeyhavenRelease {
    /// The version, as Debian's packages and `--version` give it.
    package static let version = "1.0.0"
}
