// Counts what one look-up costs in instructions, which (unlike time on a shared virtual machine)
// repeat exactly from run to run: scripts/bench-instructions.sh runs this under callgrind twice
// with different counts and divides the difference by the extra iterations, so start-up and
// the fixture's setup cancel out.
//
//   bench-instructions copy-matching|floor-read SIZE ITERATIONS
import BenchmarkSupport
import Foundation

/// A fixed sequence of accounts, so that two runs read the same items (Knuth's MMIX linear
/// congruential generator; the high bits folded in, as its low bits cycle fast).
struct FixedSequence: RandomNumberGenerator {
    var state: UInt64 = 1
    mutating func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state ^ (state >> 33)
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let size = Int(arguments[2]), let iterations = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: bench-instructions copy-matching|floor-read SIZE ITERATIONS\n".utf8))
    exit(2)
}
var random = FixedSequence()
var checksum = 0
switch arguments[1] {
case "copy-matching":
    try Fixture.use(items: size)
    for _ in 0..<iterations {
        checksum &+= Lookup.copyMatching(Fixture.account(Int.random(in: 0..<size, using: &random))) == nil ? 0 : 1
    }
case "floor-read":
    let floor = try Floor(path: Fixture.folder + "/floor-\(size).sqlite", items: size)
    for _ in 0..<iterations {
        checksum &+= try floor.get(Fixture.account(Int.random(in: 0..<size, using: &random))).count
    }
default:
    FileHandle.standardError.write(Data("unknown operation \(arguments[1])\n".utf8))
    exit(2)
}
print("\(arguments[1]) \(size): \(iterations) iterations (\(checksum))")
