#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls this module makes under a name one of its types also uses (a method or a
/// property of the same name shadows the C function), called through here rather than through
/// `Glibc.` so that the module builds on Musl too.
enum System {
    static func close(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #else
        Musl.close(fd)
        #endif
    }
}
