#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls this module makes under a name one of its types also uses (a method or a
/// property of the same name shadows the C function), called through here rather than through
/// `Glibc.` so that the module builds on Musl too.
enum System {
    static func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #else
        Musl.read(fd, buffer, count)
        #endif
    }
}
