#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The C functions the package calls under a name one of its types also uses (a method or a
/// property of the same name shadows the function), called through here rather than through
/// `Glibc.`, so that the package builds on Musl too.
package enum System {
    package static func open(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
        #if canImport(Glibc)
        Glibc.open(path, flags, mode)
        #else
        Musl.open(path, flags, mode)
        #endif
    }

    package static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #else
        Musl.read(fd, buffer, count)
        #endif
    }

    package static func close(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #else
        Musl.close(fd)
        #endif
    }

    package static func socket(_ domain: Int32, _ type: Int32, _ protocol: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.socket(domain, type, `protocol`)
        #else
        Musl.socket(domain, type, `protocol`)
        #endif
    }

    package static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(fd, backlog)
        #else
        Musl.listen(fd, backlog)
        #endif
    }

    package static func poll(_ descriptors: UnsafeMutablePointer<pollfd>?, _ count: nfds_t, _ timeout: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.poll(descriptors, count, timeout)
        #else
        Musl.poll(descriptors, count, timeout)
        #endif
    }

    package static func send(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
        #if canImport(Glibc)
        Glibc.send(fd, bytes, count, flags)
        #else
        Musl.send(fd, bytes, count, flags)
        #endif
    }

    /// Sets `signal`'s action to ignore it.
    package static func ignore(_ signal: Int32) {
        #if canImport(Glibc)
        _ = Glibc.signal(signal, SIG_IGN)
        #else
        _ = Musl.signal(signal, SIG_IGN)
        #endif
    }
}
