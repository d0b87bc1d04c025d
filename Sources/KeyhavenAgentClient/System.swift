#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls this module makes under a name one of its types also uses (a method or a
/// property of the same name shadows the C function), called through here rather than through
/// `Glibc.` so that the module builds on Musl too.
enum System {
    static func socket(_ domain: Int32, _ type: Int32, _ protocol: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.socket(domain, type, `protocol`)
        #else
        Musl.socket(domain, type, `protocol`)
        #endif
    }

    static func poll(_ descriptors: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.poll(descriptors, count, timeout)
        #else
        Musl.poll(descriptors, count, timeout)
        #endif
    }

    static func send(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
        #if canImport(Glibc)
        Glibc.send(fd, bytes, count, flags)
        #else
        Musl.send(fd, bytes, count, flags)
        #endif
    }
}
