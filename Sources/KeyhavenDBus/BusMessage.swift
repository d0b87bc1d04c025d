import CSystemdBus

/// Reading and appending ``BusValue``s with sd-bus's message API (on the bus thread only:
/// sd-bus objects belong to one thread).
enum BusMessage {
    /// Every argument of a message; nil if it cannot be read (sd-bus has checked it against its
    /// signature already, so only a type this provider never takes, such as a file descriptor).
    static func arguments(_ message: OpaquePointer) -> [BusValue]? {
        var values: [BusValue] = []
        while true {
            var type: CChar = 0
            var contents: UnsafePointer<CChar>?
            let r = sd_bus_message_peek_type(message, &type, &contents)
            if r == 0 { return values }
            guard r > 0, let value = read(message, type: type, contents: contents.map { String(cString: $0) }) else { return nil }
            values.append(value)
        }
    }

    private static func peek(_ message: OpaquePointer) -> (CChar, String?)? {
        var type: CChar = 0
        var contents: UnsafePointer<CChar>?
        guard sd_bus_message_peek_type(message, &type, &contents) > 0 else { return nil }
        return (type, contents.map { String(cString: $0) })
    }

    private static func read(_ m: OpaquePointer, type: CChar, contents: String?) -> BusValue? {
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "a"):
            guard let contents else { return nil }
            if contents == "y" {
                var pointer: UnsafeRawPointer?
                var size = 0
                guard sd_bus_message_read_array(m, CChar(UInt8(ascii: "y")), &pointer, &size) >= 0 else { return nil }
                guard size > 0, let pointer else { return .bytes([]) }
                return .bytes(Array(UnsafeRawBufferPointer(start: pointer, count: size)))
            }
            guard sd_bus_message_enter_container(m, CChar(UInt8(ascii: "a")), contents) > 0 else { return nil }
            var items: [BusValue] = []
            var pairs: [BusValue.Pair] = []
            let isDictionary = contents.hasPrefix("{")
            while let (t, c) = peek(m) {
                if isDictionary {
                    guard t == CChar(UInt8(ascii: "e")), let c, sd_bus_message_enter_container(m, t, c) > 0,
                          let (kt, kc) = peek(m), let key = read(m, type: kt, contents: kc),
                          let (vt, vc) = peek(m), let value = read(m, type: vt, contents: vc),
                          sd_bus_message_exit_container(m) >= 0 else { return nil }
                    pairs.append(BusValue.Pair(key, value))
                } else {
                    guard let item = read(m, type: t, contents: c) else { return nil }
                    items.append(item)
                }
            }
            guard sd_bus_message_exit_container(m) >= 0 else { return nil }
            if isDictionary {
                let inner = contents.dropFirst().dropLast()
                guard let keyType = inner.first else { return nil }
                return .dictionary(key: String(keyType), value: String(inner.dropFirst()), pairs)
            }
            return .array(element: contents, items)
        case UInt8(ascii: "v"), UInt8(ascii: "r"):
            guard let contents, sd_bus_message_enter_container(m, type, contents) > 0 else { return nil }
            var fields: [BusValue] = []
            while let (t, c) = peek(m) {
                guard let field = read(m, type: t, contents: c) else { return nil }
                fields.append(field)
            }
            guard sd_bus_message_exit_container(m) >= 0 else { return nil }
            if UInt8(bitPattern: type) == UInt8(ascii: "v") { return fields.count == 1 ? .variant(fields[0]) : nil }
            return .structure(fields)
        default:
            return readBasic(m, type: type)
        }
    }

    private static func readBasic(_ m: OpaquePointer, type: CChar) -> BusValue? {
        var storage: UInt64 = 0
        var text: UnsafePointer<CChar>?
        switch UInt8(bitPattern: type) {
        case UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"):
            guard sd_bus_message_read_basic(m, type, &text) > 0, let text else { return nil }
            let string = String(cString: text)
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "o"): return .objectPath(string)
            case UInt8(ascii: "g"): return .signature(string)
            default: return .string(string)
            }
        case UInt8(ascii: "h"):
            // The message owns the descriptor it carries: the value holds a duplicate of its own.
            var fd: Int32 = -1
            guard sd_bus_message_read_basic(m, type, &fd) > 0, let owned = BusFileDescriptor(duplicating: fd) else { return nil }
            return .fileDescriptor(owned)
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "x"), UInt8(ascii: "t"),
             UInt8(ascii: "d"), UInt8(ascii: "n"), UInt8(ascii: "q"):
            guard sd_bus_message_read_basic(m, type, &storage) > 0 else { return nil }
            switch UInt8(bitPattern: type) {
            case UInt8(ascii: "y"): return .byte(UInt8(truncatingIfNeeded: storage))
            case UInt8(ascii: "b"): return .bool(UInt32(truncatingIfNeeded: storage) != 0)
            case UInt8(ascii: "i"): return .int32(Int32(truncatingIfNeeded: storage))
            case UInt8(ascii: "n"): return .int32(Int32(Int16(truncatingIfNeeded: storage)))
            case UInt8(ascii: "q"): return .uint32(UInt32(UInt16(truncatingIfNeeded: storage)))
            case UInt8(ascii: "u"): return .uint32(UInt32(truncatingIfNeeded: storage))
            case UInt8(ascii: "x"): return .int64(Int64(bitPattern: storage))
            case UInt8(ascii: "d"): return .double(Double(bitPattern: storage))
            default: return .uint64(storage)
            }
        default:
            return nil
        }
    }

    // MARK: - Appending

    /// Appends values in order; false if sd-bus refused one (an invalid object path, say).
    @discardableResult
    static func append(_ m: OpaquePointer, _ values: [BusValue]) -> Bool {
        values.allSatisfy { append(m, $0) }
    }

    private static func append(_ m: OpaquePointer, _ value: BusValue) -> Bool {
        func basic<T: BitwiseCopyable>(_ type: UInt8, _ v: T) -> Bool {
            var v = v
            return sd_bus_message_append_basic(m, CChar(type), &v) >= 0
        }
        func text(_ type: UInt8, _ s: String) -> Bool {
            s.withCString { sd_bus_message_append_basic(m, CChar(type), $0) >= 0 }
        }
        func container(_ type: UInt8, _ contents: String, _ body: () -> Bool) -> Bool {
            guard sd_bus_message_open_container(m, CChar(type), contents) >= 0, body() else { return false }
            return sd_bus_message_close_container(m) >= 0
        }
        switch value {
        case .byte(let v): return basic(UInt8(ascii: "y"), v)
        case .bool(let v): return basic(UInt8(ascii: "b"), Int32(v ? 1 : 0))
        case .int32(let v): return basic(UInt8(ascii: "i"), v)
        case .uint32(let v): return basic(UInt8(ascii: "u"), v)
        case .int64(let v): return basic(UInt8(ascii: "x"), v)
        case .uint64(let v): return basic(UInt8(ascii: "t"), v)
        case .double(let v): return basic(UInt8(ascii: "d"), v)
        case .string(let s): return text(UInt8(ascii: "s"), s)
        case .objectPath(let s): return text(UInt8(ascii: "o"), s)
        case .signature(let s): return text(UInt8(ascii: "g"), s)
        case .bytes(let bytes):
            return bytes.withUnsafeBytes { sd_bus_message_append_array(m, CChar(UInt8(ascii: "y")), $0.baseAddress, $0.count) >= 0 }
        case .array(let element, let items):
            return container(UInt8(ascii: "a"), element) { items.allSatisfy { append(m, $0) } }
        case .dictionary(let key, let valueType, let pairs):
            return container(UInt8(ascii: "a"), "{\(key)\(valueType)}") {
                pairs.allSatisfy { pair in
                    container(UInt8(ascii: "e"), key + valueType) { append(m, pair.key) && append(m, pair.value) }
                }
            }
        case .structure(let fields):
            return container(UInt8(ascii: "r"), fields.map(\.signature).joined()) { fields.allSatisfy { append(m, $0) } }
        case .variant(let inner):
            return container(UInt8(ascii: "v"), inner.signature) { append(m, inner) }
        case .fileDescriptor(let descriptor):
            return basic(UInt8(ascii: "h"), descriptor.fd)
        }
    }
}
