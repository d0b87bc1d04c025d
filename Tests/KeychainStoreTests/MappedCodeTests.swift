import Foundation
import KeychainStore
import Testing

/// What the agent reads of a client's code and sandbox (docs/access.md, "Code in the process",
/// "Sandboxed apps"): the executable mappings of a maps file, and a `.flatpak-info`.
struct MappedCodeTests {
    @Test("Executable file mappings are read with their device, inode and whole path; others are passed over")
    func executableMappings() {
        let maps = """
            55d0c0a00000-55d0c0a10000 r--p 00000000 fe:00 1234                       /usr/bin/prog
            55d0c0a10000-55d0c0a20000 r-xp 00010000 fe:00 1234                       /usr/bin/prog
            7f0000000000-7f0000100000 r-xp 00000000 fe:00 99                         /usr/lib/libc.so.6
            7f0000100000-7f0000200000 r-xp 00100000 fe:00 99                         /usr/lib/libc.so.6
            7f0000200000-7f0000201000 r-xp 00000000 00:1a 77                         /home/u/my libs/a b.so (deleted)
            7f0000300000-7f0000301000 rwxp 00000000 00:00 0
            7f0000400000-7f0000401000 r-xp 00000000 00:00 0                          [vdso]
            7f0000500000-7f0000501000 rw-p 00000000 fe:00 5                          /usr/lib/data
            7f0000600000-7f0000601000 r-xp 00000000 zz:00 5                          /bad
            """
        let mappings = MappedCode.executableMappings(Array(maps.utf8))
        #expect(mappings.map(\.path) == ["/usr/bin/prog", "/usr/lib/libc.so.6", "/home/u/my libs/a b.so (deleted)", "(unreadable mapping)"])
        #expect(mappings[0].file == MappedCode.FileID(major: 0xfe, minor: 0, inode: 1234))
        #expect(mappings[2].file == MappedCode.FileID(major: 0, minor: 0x1a, inode: 77))
        #expect(MappedCode.executableMappings([]).isEmpty)
    }

    @Test("A mapping counts as the user's unless root owns the file and nobody else may write it; a deleted or unreadable one always does")
    func foreignCode() {
        let executable = MappedCode.FileID(major: 1, minor: 2, inode: 3)
        let own = MappedCode.Mapping(file: executable, path: "/anywhere")
        var libc = stat()
        let candidates: [String] = ["/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"]
        let libcPath = candidates.first { path in stat(path, &libc) == 0 }
        #expect(MappedCode.foreignCode([own], executable: executable, root: "") == nil)
        if let libcPath, libc.st_uid == 0 {
            #expect(MappedCode.foreignCode([MappedCode.Mapping(file: MappedCode.FileID(libc), path: libcPath)], executable: executable, root: "") == nil)
            // The same path naming another file than the one mapped: not vouched for.
            let other = MappedCode.Mapping(file: MappedCode.FileID(major: 9, minor: 9, inode: 9), path: libcPath)
            #expect(MappedCode.foreignCode([other], executable: executable, root: "") == other)
        }
        let deleted = MappedCode.Mapping(file: MappedCode.FileID(major: 0, minor: 1, inode: 2), path: "/usr/lib/gone.so (deleted)")
        #expect(MappedCode.foreignCode([own, deleted], executable: executable, root: "") == deleted)
    }

    @Test("A .flatpak-info gives the app id and app path; a file without them, or an id Flatpak would refuse, gives none")
    func flatpakInfo() {
        let info = "[Application]\nname=org.example.App\nruntime=runtime/org.example.Platform/x86_64/1\n\n[Instance]\ninstance-id=42\napp-path=/var/lib/flatpak/app/org.example.App/x86_64/stable/abc/files\n"
        #expect(FlatpakSandbox.parse(info) == FlatpakSandbox(appID: "org.example.App", appPath: "/var/lib/flatpak/app/org.example.App/x86_64/stable/abc/files"))
        #expect(FlatpakSandbox.parse(info)?.applicationGroup == "flatpak:org.example.App")
        #expect(FlatpakSandbox.parse("[Application]\nname=org.example.App\n") == nil)
        #expect(FlatpakSandbox.parse("[Instance]\napp-path=/x\n[Application]\nname=two.parts\n") == nil)
        #expect(FlatpakSandbox.parse("[Instance]\napp-path=/x\n[Application]\nname=org.1example.App\n") == nil)
        #expect(FlatpakSandbox.parse("[Instance]\napp-path=relative\n[Application]\nname=org.example.App\n") == nil)
        // The app path must be the app's own deployment, and the program the file there.
        let sandbox = FlatpakSandbox(appID: "org.example.App", appPath: "/nonexistent/app/org.example.Other/files")
        #expect(!sandbox.runs(executablePath: "/app/bin/x", file: MappedCode.FileID(major: 0, minor: 0, inode: 1)))
    }
}
