import Foundation

/// The package's own folder, for tests that read its scripts, docs and contrib files.
public enum SourceTree {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
}
