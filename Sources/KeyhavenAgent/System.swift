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

    static func listen(_ fd: Int32, _ backlog: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.listen(fd, backlog)
        #else
        Musl.listen(fd, backlog)
        #endif
    }

    static func ignore(_ signal: Int32) {
        #if canImport(Glibc)
        _ = Glibc.signal(signal, SIG_IGN)
        #else
        _ = Musl.signal(signal, SIG_IGN)
        #endif
    }
}
