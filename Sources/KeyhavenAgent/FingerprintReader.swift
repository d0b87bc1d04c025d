import Crypto
import FoundationEssentials
import KeychainModel
import KeyhavenDBus

/// Biometry through fprintd (`net.reactivated.Fprint` on the system bus, its documented
/// interface): the default reader's enrolled fingers, and one verification (claim, verify any
/// enrolled finger, release). Each call connects anew, so a reader or an fprintd that comes or
/// goes is followed.
///
/// Only fprintd is believed (docs/access.md, "User presence and biometry"): the bus must be one
/// root's daemon serves, the connection that owns `net.reactivated.Fprint` must run as root, and
/// the calls go to that connection and only its signals count. Any program on the bus can send a
/// `VerifyStatus` signal, and when fprintd is not running any program can take its name.
package struct FingerprintReader: Sendable {
    static let service = "net.reactivated.Fprint"
    static let deviceInterface = "net.reactivated.Fprint.Device"

    package enum Outcome: Sendable, Equatable {
        case match
        case noMatch
        /// No fprintd, no reader, no finger enrolled, or the reader failed: why.
        case unavailable(String)
    }

    /// How long a verification waits for the user's finger.
    let timeoutSeconds: Int

    package init(timeoutSeconds: Int = 30) {
        self.timeoutSeconds = timeoutSeconds
    }

    /// A digest of the enrolled set (the reader's object and its enrolled fingers, sorted): what a
    /// `.biometryCurrentSet` item keeps, as Apple's keeps the biometry domain state. Nil when no
    /// reader answers or nothing is enrolled.
    package func enrolledSet() -> Data? {
        guard let bus = try? BusConnection.rootsSystemBus(), let fprintd = try? Self.fprintd(on: bus),
              let device = try? defaultDevice(bus, fprintd),
              let reply = try? bus.call(fprintd, device, Self.deviceInterface, "ListEnrolledFingers", [.string("")]),
              case .array(_, let values)? = reply.first else { return nil }
        let fingers = values.compactMap(\.stringValue).sorted()
        guard !fingers.isEmpty else { return nil }
        return Data(SHA256.hash(data: Array(([device] + fingers).joined(separator: "\n").utf8)))
    }

    /// Asks the user for a finger: claims the default reader, verifies against any enrolled
    /// finger, and releases it.
    package func verify() -> Outcome {
        let bus: BusConnection
        let fprintd: String
        let device: String
        do throws(StoreError) {
            bus = try BusConnection.rootsSystemBus()
        } catch {
            return .unavailable("no system bus (\(error.message))")
        }
        do throws(BusError) {
            fprintd = try Self.fprintd(on: bus)
            device = try defaultDevice(bus, fprintd)
            _ = try bus.call(fprintd, device, Self.deviceInterface, "Claim", [.string("")])
        } catch {
            return .unavailable("no fingerprint reader (\(error.message))")
        }
        defer { _ = try? bus.call(fprintd, device, Self.deviceInterface, "Release") }
        var started = false
        defer { if started { _ = try? bus.call(fprintd, device, Self.deviceInterface, "VerifyStop") } }
        let deadline = ContinuousClock.now + .seconds(timeoutSeconds)
        while true {
            let left = Int((deadline - ContinuousClock.now).components.seconds)
            guard left > 0 else { return .unavailable("no finger was given within \(timeoutSeconds) s") }
            let arguments: [BusValue]?
            do throws(BusError) {
                arguments = try bus.awaitSignal(device, Self.deviceInterface, "VerifyStatus", sender: fprintd, seconds: left) { () throws(BusError) in
                    guard !started else { return }
                    _ = try bus.call(fprintd, device, Self.deviceInterface, "VerifyStart", [.string("any")])
                    started = true
                }
            } catch {
                return .unavailable("the reader cannot verify (\(error.message))")
            }
            guard let arguments, let result = arguments.first?.stringValue else {
                return .unavailable("no finger was given within \(timeoutSeconds) s")
            }
            let done = arguments.count > 1 ? arguments[1].boolValue ?? true : true
            switch result {
            case "verify-match": return .match
            case "verify-no-match": return .noMatch
            case "verify-disconnected", "verify-unknown-error": return .unavailable("the reader failed (\(result))")
            default:
                // A retry (a swipe too short, a finger not centred): the reader goes on unless done.
                if done { return .noMatch }
            }
        }
    }

    /// The unique name of fprintd's connection (``BusConnection/rootOwner(of:service:)``).
    static func fprintd(on bus: BusConnection) throws(BusError) -> String {
        try bus.rootOwner(of: service, service: "fprintd")
    }

    private func defaultDevice(_ bus: BusConnection, _ fprintd: String) throws(BusError) -> String {
        let reply = try bus.call(fprintd, "/net/reactivated/Fprint/Manager", "net.reactivated.Fprint.Manager", "GetDefaultDevice")
        guard let path = reply.first?.stringValue else { throw .failed("fprintd named no reader") }
        return path
    }
}
