import Foundation
import KeychainTestSupport
import Testing

/// docs/environment.md names every `KEYHAVEN_*` variable the sources, scripts and tests read.
@Suite struct EnvironmentDocumentTests {
    /// Names that look like variables and are not: C header guards, an enum's cases, compile-time
    /// definitions.
    static func isVariable(_ name: String) -> Bool {
        !name.hasSuffix("_H") && !name.hasPrefix("KEYHAVEN_FAULT") && !["KEYHAVEN_PROGRAM", "KEYHAVEN_FUZZING"].contains(name)
    }

    @Test("Every KEYHAVEN_* variable read anywhere has its row in docs/environment.md, and every row names one that is read")
    func everyVariableDocumented() throws {
        let root = SourceTree.root
        var used: Set<String> = []
        let pattern = try Regex("KEYHAVEN_[A-Z0-9_]*[A-Z0-9]")
        for folder in ["Sources", "Tests", "Tools", "Benchmarks/Benchmarks", "scripts", "contrib", ".ci"] {
            let files = FileManager.default.enumerator(atPath: root + "/" + folder)?.compactMap { $0 as? String } ?? []
            for file in files where !file.contains(".build") {
                guard let text = try? String(contentsOfFile: "\(root)/\(folder)/\(file)", encoding: .utf8) else { continue }
                for match in text.matches(of: pattern) { used.insert(String(text[match.range])) }
            }
        }
        let manifest = try String(contentsOfFile: root + "/Package.swift", encoding: .utf8)
        for match in manifest.matches(of: pattern) { used.insert(String(manifest[match.range])) }
        used = used.filter(Self.isVariable)
        #expect(used.count > 30)
        let page = try String(contentsOfFile: root + "/docs/environment.md", encoding: .utf8)
        var documented: Set<String> = []
        for line in page.split(separator: "\n") where line.hasPrefix("| `KEYHAVEN_") {
            let cell = line.split(separator: "|")[0]
            for match in cell.matches(of: pattern) { documented.insert(String(cell[match.range])) }
        }
        for name in used.subtracting(documented).sorted() { Issue.record("docs/environment.md has no row for \(name)") }
        for name in documented.subtracting(used).sorted() { Issue.record("docs/environment.md names \(name), which nothing reads") }
    }
}
