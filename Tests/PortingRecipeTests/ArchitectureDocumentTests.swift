import Foundation
import KeychainTestSupport
import Testing

/// docs/architecture.md's module tables against Package.swift: every module has a line, that
/// line names every module it depends on, and no line names a module that does not exist.
struct ArchitectureDocumentTests {
    /// The tables' lines: the modules each first cell names, and the modules its last cell names.
    static func documentedModules() throws -> [(modules: [String], imports: Set<String>)] {
        let text = try String(contentsOfFile: SourceTree.root + "/docs/architecture.md", encoding: .utf8)
        var rows: [(modules: [String], imports: Set<String>)] = []
        var inModuleTable = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("| module |") { inModuleTable = true; continue }
            guard line.hasPrefix("|") else { inModuleTable = false; continue }
            guard inModuleTable, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 5 else { continue }
            rows.append((names(in: cells[1]), Set(names(in: cells[cells.count - 2]))))
        }
        return rows
    }

    /// The words in backticks.
    static func names(in cell: String) -> [String] {
        cell.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 1 }.map { String($0.element) }
    }

    @Test("Every module of Package.swift has a line in docs/architecture.md naming the modules it depends on, and every line a module")
    func everyModuleDocumented() throws {
        let targets = try PackageModules.current.get().dependencies
        #expect(targets.count > 20)
        let rows = try Self.documentedModules()
        for (name, dependencies) in targets.sorted(by: { $0.key < $1.key }) {
            guard let row = rows.first(where: { $0.modules.contains(name) }) else {
                Issue.record("docs/architecture.md has no line for \(name)")
                continue
            }
            for dependency in dependencies where !row.imports.contains(dependency) {
                Issue.record("docs/architecture.md does not say that \(name) imports \(dependency)")
            }
        }
        for row in rows {
            for module in row.modules where targets[module] == nil {
                Issue.record("docs/architecture.md names \(module), which Package.swift does not have")
            }
        }
    }

    @Test("docs/architecture.md's picture of the layers has every module once, each above every module it depends on")
    func layersPointDown() throws {
        let targets = try PackageModules.current.get().dependencies
        let text = try String(contentsOfFile: SourceTree.root + "/docs/architecture.md", encoding: .utf8)
        let section = try #require(text.components(separatedBy: "## Layers\n").dropFirst().first)
        let picture = try #require(section.components(separatedBy: "```").dropFirst().first)
        var line: [String: Int] = [:]
        for (number, row) in picture.split(separator: "\n").enumerated() {
            for word in row.split(separator: " ").map(String.init) where targets[word] != nil {
                #expect(line[word] == nil, "\(word) is in the picture twice")
                line[word] = number
            }
        }
        for (name, dependencies) in targets.sorted(by: { $0.key < $1.key }) {
            guard let own = line[name] else {
                Issue.record("\(name) is not in docs/architecture.md's picture of the layers")
                continue
            }
            for dependency in dependencies where targets[dependency] != nil {
                #expect((line[dependency] ?? -1) > own, "\(name) depends on \(dependency), which the picture does not put below it")
            }
        }
    }

    @Test("The README's table of what is here names modules Package.swift has, and every product and shipped program")
    func readmeModuleTable() throws {
        let modules = try PackageModules.current.get()
        let targets = Set(modules.dependencies.keys), products = modules.products
        let readme = try String(contentsOfFile: SourceTree.root + "/README.md", encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "## What is here\n").dropFirst().first?.components(separatedBy: "\n## ").first)
        let rows = section.split(separator: "\n").filter { $0.hasPrefix("| `") }
        #expect(rows.count > 5)
        var named: Set<String> = []
        let name = try Regex("`([A-Za-z][A-Za-z-]*)`")
        for row in rows {
            let first = row.split(separator: "|")[0]
            for match in first.matches(of: name) {
                let module = String(first[match.range].dropFirst().dropLast())
                #expect(targets.contains(module), "the README names \(module), which Package.swift does not have")
                named.insert(module)
            }
            for match in row.matches(of: name) { named.insert(String(row[match.range].dropFirst().dropLast())) }
        }
        for product in products where product != "keyhaven-example" {
            #expect(named.contains(product), "the README's table does not name \(product)")
        }
    }

    @Test("The C library is imported as Glibc or Musl, never one alone, and named only in KeychainModel's System.swift")
    func platformImports() throws {
        let sources = SourceTree.root + "/Sources"
        let files = try #require(FileManager.default.enumerator(atPath: sources)).compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            if text.contains("import Glibc") {
                #expect(text.contains("#if canImport(Glibc)\nimport Glibc\n#elseif canImport(Musl)\nimport Musl\n#endif"), "\(file)")
            }
            guard file != "KeychainModel/System.swift" else { continue }
            for line in text.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                #expect(!line.contains("Glibc.") && !line.contains("Musl."), "\(file): \(line) (call it through System)")
            }
        }
    }

    @Test("Each module's sources import only the package's modules its line in docs/architecture.md allows: the layers point down")
    func importsFollowTheLayers() throws {
        let folders = try PackageModules.current.get().folders
        let rows = try Self.documentedModules()
        var checked = 0
        for (name, folder) in folders.sorted(by: { $0.key < $1.key }) {
            guard let row = rows.first(where: { $0.modules.contains(name) }) else { continue }
            let files = FileManager.default.enumerator(atPath: folder)?.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
            for file in files {
                let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
                for line in text.split(separator: "\n") {
                    let words = line.split(separator: " ").map(String.init)
                    guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                          words[..<index].allSatisfy({ $0.hasPrefix("@") || ["internal", "package", "public", "private", "fileprivate"].contains($0) })
                    else { continue }
                    let imported = String(words[index + 1].split(separator: ".")[0])
                    checked += 1
                    guard imported != name, folders[imported] != nil else { continue }
                    #expect(row.imports.contains(imported), "\(name)/\(file) imports \(imported), which its line in docs/architecture.md does not allow")
                }
            }
        }
        #expect(checked > 500)
    }
}

/// Package.swift's modules (the tests' aside), read once for every test above: each one's
/// dependencies among the package's targets and products, its source folder, and the products.
struct PackageModules: Sendable {
    let dependencies: [String: [String]]
    let folders: [String: String]
    let products: [String]

    static let current = Result { () throws -> PackageModules in try PackageModules(PortingRecipeTests.manifest(apple: false)) }

    init(_ manifest: [String: Any]) {
        var dependencies: [String: [String]] = [:], folders: [String: String] = [:]
        for target in manifest["targets"] as? [[String: Any]] ?? [] where target["type"] as? String != "test" {
            guard let name = target["name"] as? String else { continue }
            dependencies[name] = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                ((dependency["byName"] ?? dependency["target"]) as? [Any])?.first as? String
            }
            folders[name] = SourceTree.root + "/" + ((target["path"] as? String) ?? "Sources/\(name)")
        }
        (self.dependencies, self.folders) = (dependencies, folders)
        products = (manifest["products"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
    }
}
