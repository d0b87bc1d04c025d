import Foundation

/// The package's own folder, for tests that read its scripts, docs and contrib files.
public enum SourceTree {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// The Swift files under Sources/, as paths relative to it, sorted.
    public static func sourceFiles() throws -> [String] {
        let sources = root + "/Sources"
        guard let walk = FileManager.default.enumerator(atPath: sources) else { return [] }
        return walk.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.sorted()
    }

    /// The lines of Sources/ outside `sayers` (files, or folders ending in `/`) whose string
    /// literals spell one of `codes` exactly, each as `file: line`. Comment lines do not count;
    /// nor does a literal listed in `otherMeanings` as `file "word"`, where the word means
    /// something else.
    public static func linesSpelling(_ codes: Set<String>, outside sayers: [String], otherMeanings: Set<String>) throws -> [String] {
        var found: [String] = []
        for file in try sourceFiles() where !sayers.contains(where: { $0.hasSuffix("/") ? file.hasPrefix($0) : file == $0 }) {
            let text = try String(contentsOfFile: root + "/Sources/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                for piece in line.split(separator: "\"", omittingEmptySubsequences: false).enumerated() where piece.offset % 2 == 1 {
                    let word = String(piece.element)
                    guard codes.contains(word), !otherMeanings.contains("\(file) \"\(word)\"") else { continue }
                    found.append("\(file): \(line.trimmingCharacters(in: .whitespaces))")
                }
            }
        }
        return found
    }
}
