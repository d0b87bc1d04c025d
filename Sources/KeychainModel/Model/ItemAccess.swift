import FoundationEssentials

/// An item's access object (macOS's `SecAccess`): which applications may use its secret, change
/// it or delete it without asking the user. Its attributes stay readable by every program that can
/// find the item (its access group decides that).
///
/// Stored encrypted with the item (docs/file-format.md); not synced: a synced copy has none, and
/// an item without one trusts every application, as macOS's data-protection items do, unless its
/// group gives its copies one where they arrive (``ReplicaAccess``).
package struct ItemAccess: Sendable, Hashable {
    /// Every application may use the item (security(1)'s `-A`; an ACL with no application list).
    package var anyApplication: Bool
    /// The trusted applications, when not ``anyApplication``.
    package var applications: [TrustedApplication]
    /// The name prompts show for the item (`SecAccessCreate`'s descriptor); empty: the item's label.
    package var descriptor: String
    /// For an item whose access control is `.biometryCurrentSet`: the digest of the fingerprints
    /// enrolled when it was added (Apple's biometry domain state). The item opens by biometry only
    /// while the enrolled set is the same. Kept in the item's sealed metadata; never sent to clients.
    package var biometrySet: Data?

    package init(anyApplication: Bool = false, applications: [TrustedApplication] = [], descriptor: String = "", biometrySet: Data? = nil) {
        self.anyApplication = anyApplication
        self.applications = applications
        self.descriptor = descriptor
        self.biometrySet = biometrySet
    }

    /// Trusts the application that adds the item, and no other.
    package static let creatorOnly = ItemAccess(applications: [.caller])

    /// Whether `application` may use the item without asking. A tampered client (injected
    /// libraries, a debugger attached) is trusted only by an item open to every application.
    package func trusts(_ application: ApplicationIdentity) -> Bool {
        if anyApplication { return true }
        guard !application.isTampered else { return false }
        return applications.contains { $0.matches(application) }
    }

    /// This access object with `application` trusted too (Always Allow).
    package func trusting(_ application: ApplicationIdentity) -> ItemAccess {
        var access = self
        if !trusts(application) { access.applications.append(TrustedApplication(application)) }
        return access
    }

    /// Whether it names the caller marker (resolved by whoever adds the item).
    package var namesCaller: Bool { applications.contains(.caller) }

    /// `.caller` replaced by `application`.
    package func resolvingCaller(as application: ApplicationIdentity) -> ItemAccess {
        var access = self
        access.applications = applications.map { $0 == .caller ? TrustedApplication(application) : $0 }
        return access
    }
}

/// One trusted application of an access object: its path and the SHA-256 digest of its executable.
///
/// A program the user cannot modify (``ApplicationIdentity/isProtected``) matches by path, so a
/// package update keeps its trust; any other matches by digest, so a modified copy is a new
/// application (macOS's code requirement, with a hash standing in for a signature).
package struct TrustedApplication: Sendable, Hashable {
    package var path: String
    package var digest: Data

    package init(path: String, digest: Data) {
        self.path = path
        self.digest = digest
    }

    package init(_ application: ApplicationIdentity) {
        self.init(path: application.path, digest: application.digest)
    }

    /// The application that makes the request (`SecTrustedApplicationCreateFromPath(nil)`).
    package static let caller = TrustedApplication(path: "", digest: Data())

    /// A path to be hashed by whoever adds the item (security(1)'s `-T`).
    package var isUnresolved: Bool { digest.isEmpty && !path.isEmpty }

    package func matches(_ application: ApplicationIdentity) -> Bool {
        guard !digest.isEmpty else { return false }
        return digest == application.digest || (application.isProtected && path == application.path)
    }
}

/// What the kernel says a program is: the executable the process runs, its digest, and whether
/// the user could have changed it. Never taken from what a client says of itself.
package struct ApplicationIdentity: Sendable, Hashable {
    /// The executable's path (`/proc/PID/exe`); empty when it could not be read.
    package var path: String
    /// SHA-256 of the executable's contents, read through a descriptor of the running file.
    package var digest: Data
    /// Owned by root in folders only root can write, and the user is not root: a package's
    /// program, identified by its path across updates.
    package var isProtected: Bool
    /// Its code may not be its file's: started with `LD_PRELOAD`, `LD_AUDIT` or a library path
    /// the user can write, traced by a debugger, or not readable at all.
    package var isTampered: Bool
    /// The program's own access group: its file name and a digest of its path, so two programs
    /// never share one by accident, whatever their names; a digest of its contents when the path
    /// is not verified.
    package var applicationGroup: String
    /// The path names the running file in the agent's own view: the process runs in the agent's
    /// mount namespace and the path's device and inode are the executable's. Only then does the
    /// path count (for the application group, the administrator role, a protected program): in a
    /// namespace of its own, a process can mount any file at any path.
    package var isPathVerified: Bool
    /// The group the program takes for its own from what it sees (its path's group, as the
    /// library computes it in the process), when that is not ``applicationGroup``: a program in a
    /// namespace of its own, a sandboxed app. The agent reads that name as this program's own group.
    package var groupAsSeen: String?

    package init(path: String, digest: Data, isProtected: Bool, isTampered: Bool, applicationGroup: String,
                 isPathVerified: Bool = true) {
        self.path = path
        self.digest = digest
        self.isProtected = isProtected
        self.isTampered = isTampered
        self.applicationGroup = applicationGroup
        self.isPathVerified = isPathVerified
    }

    /// The digest in hexadecimal, as `keyhaven access list` shows it.
    package var digestHex: String { digest.hexString }
}

extension Data {
    /// Lowercase hexadecimal.
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension TrustedApplication: WireCodable {
    package func write(to writer: inout ByteWriter) {
        path.write(to: &writer)
        digest.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(path: try String(from: &reader), digest: try Data(from: &reader))
        guard digest.isEmpty || digest.count == 32 else { throw CodecError(.malformed, "a trusted application's digest is not SHA-256") }
    }
}

extension ItemAccess: WireCodable {
    package func write(to writer: inout ByteWriter) {
        anyApplication.write(to: &writer)
        applications.write(to: &writer)
        descriptor.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(anyApplication: try Bool(from: &reader), applications: try [TrustedApplication](from: &reader),
                  descriptor: try String(from: &reader))
    }
}

extension ApplicationIdentity: WireCodable {
    package func write(to writer: inout ByteWriter) {
        path.write(to: &writer)
        digest.write(to: &writer)
        isProtected.write(to: &writer)
        isTampered.write(to: &writer)
        applicationGroup.write(to: &writer)
        isPathVerified.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(path: try String(from: &reader), digest: try Data(from: &reader), isProtected: try Bool(from: &reader),
                  isTampered: try Bool(from: &reader), applicationGroup: try String(from: &reader),
                  isPathVerified: try Bool(from: &reader))
    }
}
