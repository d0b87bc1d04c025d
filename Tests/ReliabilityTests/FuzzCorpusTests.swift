import Foundation
import KeychainTestSupport
import Testing

/// The saved fuzz inputs (Tests/FuzzCorpus: seeds, and every input a long run found that
/// crashed) replayed through each target of `keyhaven-fuzz` in a normal build: each must return.
@Suite(.freshKeychain())
struct FuzzCorpusTests {
    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("FuzzCorpus")
    }

    @Test("Every saved input of every fuzz target is handled without a crash", arguments: ["metadata", "keybag", "agent", "query", "keys", "certificates", "imports", "sync", "ssh"])
    func replay(target: String) throws {
        let folder = Self.corpus.appendingPathComponent(target)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { folder.appendingPathComponent($0).path }
        #expect(files.count >= 10)
        let process = Process()
        process.executableURL = HelperProcess.executable.deletingLastPathComponent().appendingPathComponent("keyhaven-fuzz")
        process.arguments = [target] + files
        var environment = ProcessInfo.processInfo.environment
        environment["KEYHAVEN_HOME"] = TestHome.current!.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0, "\(printed)")
        #expect(printed.contains("replayed \(files.count) inputs through \(target)"))
    }
}
