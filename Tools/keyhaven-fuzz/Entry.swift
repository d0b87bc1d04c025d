// keyhaven-fuzz: libFuzzer targets (docs/reliability.md). Built two ways:
//   scripts/fuzz.sh TARGET SECONDS   with -sanitize=fuzzer: libFuzzer drives LLVMFuzzerTestOneInput;
//                                    KEYHAVEN_FUZZ_TARGET names the target
//   swift build (normal)             a replayer: keyhaven-fuzz TARGET FILE... runs each file through
//                                    the target once (the regression tests use it on Tests/FuzzCorpus)
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    FuzzTarget.selected.run(bytes)
    return 0
}

extension FuzzTarget {
    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["KEYHAVEN_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            FileHandle.standardError.write(Data("set KEYHAVEN_FUZZ_TARGET to one of: \(allCases.map(\.rawValue).joined(separator: ", "))\n".utf8))
            exit(2)
        }
        return target
    }()
}

#if KEYHAVEN_FUZZING
/// libFuzzer's driver (from the fuzzer runtime that -sanitize=fuzzer links).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

/// SwiftPM links an executable's entry point under this name; in the fuzzing build it hands
/// over to libFuzzer's driver.
@_cdecl("keyhaven_fuzz_main")
func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}
#else
@main
struct Replay {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name) else {
            print("usage: keyhaven-fuzz \(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")) FILE...")
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                exit(1)
            }
            target.run(Array(data))
            count += 1
        }
        print("replayed \(count) inputs through \(name)")
    }
}
#endif
