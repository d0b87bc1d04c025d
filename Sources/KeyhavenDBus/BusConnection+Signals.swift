#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSystemdBus
import KeychainModel

/// A signal as it arrived: where from and what it carries.
package struct BusSignal: Sendable {
    package let path: String
    package let interface: String
    package let member: String
    package let arguments: [BusValue]
}

/// A signal handler's closure, boxed for sd-bus's userdata.
final class SignalHandler {
    let handle: (BusSignal) -> Void
    init(_ handle: @escaping (BusSignal) -> Void) { self.handle = handle }
}

extension BusConnection {
    /// The system bus's address: its standard socket. `DBUS_SYSTEM_BUS_ADDRESS` is not followed, so
    /// a program of the user cannot start the agent on a bus of its own making; the tests name
    /// theirs with `KEYHAVEN_TEST_SYSTEM_BUS`, which those who act on the bus's word accept only
    /// from a daemon root runs (``rootsSystemBus()``).
    package static var systemBusAddress: String {
        if let address = getenv("KEYHAVEN_TEST_SYSTEM_BUS").map({ String(cString: $0) }), !address.isEmpty { return address }
        return "unix:path=/run/dbus/system_bus_socket"
    }

    /// Delivers the signals that match (a nil part matches anything) to `handler`, on the bus
    /// thread while ``run()`` serves; on that thread, or before ``run()`` starts.
    package func watchSignals(sender: String?, path: String?, interface: String?, member: String?,
                              _ handler: @escaping (BusSignal) -> Void) throws(StoreError) {
        let box = SignalHandler(handler)
        var slot: OpaquePointer?
        let r = sd_bus_match_signal(handle, &slot, sender, path, interface, member, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            let box = Unmanaged<SignalHandler>.fromOpaque(userdata).takeUnretainedValue()
            let text = { (value: UnsafePointer<CChar>?) in value.map { String(cString: $0) } ?? "" }
            box.handle(BusSignal(path: text(sd_bus_message_get_path(message)), interface: text(sd_bus_message_get_interface(message)),
                                 member: text(sd_bus_message_get_member(message)), arguments: BusMessage.arguments(message) ?? []))
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
        guard r >= 0 else {
            throw StoreError(.notAvailable, "cannot watch \(interface ?? "*").\(member ?? "*"): \(String(cString: strerror(-r)))")
        }
        slots.append(slot)
        signalHandlers.append(box)
    }
}
