import ArgumentParser
import KeychainModel
import Testing
@testable import KeyhavenCLI

/// The fast reader of find-*-password command lines agrees with ArgumentParser on every command
/// line it accepts, and accepts the plain ones.
@Suite struct QuickFindTests {
    /// What ArgumentParser makes of a command line, in QuickFind's terms; nil if it refuses it.
    static func parsedByArgumentParser(_ arguments: [String]) -> QuickFind? {
        guard let name = arguments.first else { return nil }
        let rest = Array(arguments.dropFirst())
        if name == "find-generic-password" {
            guard let command = try? FindPassword<GenericPasswordOptions>.parseAsRoot(rest) as? FindPassword<GenericPasswordOptions> else { return nil }
            return QuickFind(itemClass: .genericPassword, attributes: command.item.attributes, show: command.show.mode, keychains: command.keychains)
        }
        guard let command = try? FindPassword<InternetPasswordOptions>.parseAsRoot(rest) as? FindPassword<InternetPasswordOptions> else { return nil }
        return QuickFind(itemClass: .internetPassword, attributes: command.item.attributes, show: command.show.mode, keychains: command.keychains)
    }

    @Test("The plain command lines are read without ArgumentParser, as ArgumentParser reads them")
    func plainLines() throws {
        let lines: [[String]] = [
            ["find-generic-password", "-a", "alice", "-s", "mail", "-w"],
            ["find-generic-password", "-a", "target", "-s", "bench", "-w", "bench"],
            ["find-generic-password", "-s", "mail", "-g", "login.keychain-db", "/tmp/other.keychain-db"],
            ["find-generic-password", "-l", "label", "-j", "comment", "-D", "kind", "-c", "aapl", "-C", "note", "-G", "gen", "--json"],
            ["find-generic-password", "-a", "", "-s", "with space", "-w"],
            ["find-internet-password", "-a", "bob", "-s", "example.com", "-P", "443", "-r", "htps", "-t", "dflt", "-p", "/x", "-d", "dom", "-w"],
            ["find-generic-password"],
        ]
        for line in lines {
            let quick = try #require(QuickFind(line), "\(line)")
            #expect(quick == Self.parsedByArgumentParser(line), "\(line)")
        }
        #expect(QuickFind(lines[1])?.attributes == ["acct": .string("target"), "svce": .string("bench")])
        #expect(QuickFind(lines[1])?.show == ShowMode(passwordOnly: true))
        #expect(QuickFind(lines[1])?.keychains == ["bench"])
    }

    @Test("Anything unusual is left to ArgumentParser")
    func unusualLines() {
        let lines: [[String]] = [
            ["find-generic-password", "-h"], ["find-generic-password", "--help"], ["find-generic-password", "-a"],
            ["find-generic-password", "-a", "-s"], ["find-generic-password", "-a", "x", "-a", "y"], ["find-generic-password", "-gw"],
            ["find-generic-password", "--", "-a"], ["find-generic-password", "-x", "1"], ["find-generic-password", "-c", "abc"],
            ["find-internet-password", "-P", "70000"], ["find-internet-password", "-G", "x"], ["find-generic-password", "-d", "x"],
            ["add-generic-password", "-a", "x"], ["find-generic-password", "-w", "-w"], ["find-generic-password", "-a=x"],
        ]
        for line in lines { #expect(QuickFind(line) == nil, "\(line)") }
    }

    @Test("Random command lines: whatever the fast reader accepts, ArgumentParser reads the same way")
    func randomLines() {
        let options = ["-a", "-s", "-l", "-j", "-D", "-c", "-C", "-G", "-d", "-p", "-P", "-r", "-t", "-g", "-w", "--json", "-x", "--", "-h"]
        let values = ["alice", "", "with space", "-", "-a", "aapl", "abc", "abcde", "htps", "80", "65535", "70000", "-1", "+80",
                      "caf\u{E9}", "\u{1F511}\u{1F511}", "ftp ", "keychain", "/tmp/k.keychain-db", "--json"]
        var generator = SystemRandomNumberGenerator()
        var (accepted, agreed) = (0, 0)
        for _ in 0..<2_000 {
            var line = [Bool.random(using: &generator) ? "find-generic-password" : "find-internet-password"]
            for _ in 0..<Int.random(in: 0...7, using: &generator) {
                line.append(Bool.random(using: &generator) ? options.randomElement(using: &generator)! : values.randomElement(using: &generator)!)
            }
            guard let quick = QuickFind(line) else { continue }
            accepted += 1
            let parsed = Self.parsedByArgumentParser(line)
            #expect(parsed == quick, "\(line)")
            if parsed == quick { agreed += 1 }
        }
        #expect(accepted > 200, "the fast reader should take many of these lines, took \(accepted)")
        #expect(agreed == accepted)
    }
}
