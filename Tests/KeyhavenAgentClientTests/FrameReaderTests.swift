import Foundation
import KeyhavenAgentClient
import Testing

/// Frames read in as few `recv`s as their bytes allow, on a real socket pair: bytes of the next
/// frame read with one are kept for it, a long frame grows its buffer as its bytes come, and an
/// oversized length or an early end is a failure.
@Suite
struct FrameReaderTests {
    private func socketPair() throws -> (reading: Int32, writing: Int32) {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (fds[0], fds[1])
    }

    private func frame(_ body: [UInt8]) -> [UInt8] {
        let n = UInt32(body.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + body
    }

    private func write(_ bytes: [UInt8], to fd: Int32) {
        #expect(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
    }

    @Test("Frames that came together are read apart: the second from the bytes read with the first, then the end")
    func framesTogether() throws {
        let (reading, writing) = try socketPair()
        defer { close(reading); close(writing) }
        let first = Array("first".utf8), second = [UInt8](repeating: 7, count: 300), third = Array("third".utf8)
        // The third frame's length comes with the others, its body later.
        let bytes = frame(first) + frame(second) + frame(third)
        write(Array(bytes.dropLast(third.count)), to: writing)
        var reader = FrameReader(fd: reading)
        var arrivals = 0
        #expect(try reader.next(maximum: 1000) { arrivals += 1 } == first)
        #expect(reader.hasPending)
        #expect(try reader.next(maximum: 1000) { arrivals += 1 } == second)
        write(third, to: writing)
        #expect(try reader.next(maximum: 1000) { arrivals += 1 } == third)
        #expect(!reader.hasPending && arrivals == 3)
        shutdown(writing, Int32(SHUT_WR))
        #expect(throws: FrameReader.Failure.closed) { try reader.next(maximum: 1000) }
    }

    @Test("Of frames sent together, a read takes at most the first read's 1 KiB: the rest stays in the socket")
    func holdsAtMostTheFirstRead() throws {
        let (reading, writing) = try socketPair()
        defer { close(reading); close(writing) }
        let frames = (0..<40).flatMap { frame([UInt8](repeating: UInt8($0), count: 96)) }  // 4,000 bytes
        write(frames, to: writing)
        var reader = FrameReader(fd: reading)
        #expect(try reader.next(maximum: 1000) == [UInt8](repeating: 0, count: 96))
        var left: Int32 = 0
        #expect(ioctl(reading, UInt(FIONREAD), &left) == 0)
        #expect(Int(left) == frames.count - FrameReader.firstRead && FrameReader.firstRead == 1024)
        for index in 1..<40 { #expect(try reader.next(maximum: 1000) == [UInt8](repeating: UInt8(index), count: 96)) }
        #expect(!reader.hasPending)
    }

    @Test("A frame longer than the first read, read with a step and without one")
    func longFrames() throws {
        let body = (0..<(5 * FrameReader.firstRead + 3)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for step in [1024, Int.max] {
            let (reading, writing) = try socketPair()
            defer { close(reading); close(writing) }
            let bytes = frame(body)
            let writer = Thread { [self] in
                // In pieces, so the reader waits for more more than once.
                var start = 0
                while start < bytes.count {
                    let end = min(bytes.count, start + 3000)
                    write(Array(bytes[start..<end]), to: writing)
                    start = end
                    Thread.sleep(forTimeInterval: 0.005)
                }
            }
            writer.start()
            var reader = FrameReader(fd: reading)
            #expect(try reader.next(maximum: body.count, step: step) == body)
            #expect(!reader.hasPending)
        }
    }

    @Test("A length over the maximum fails at once; so does an end within the length or the body")
    func failures() throws {
        do {
            let (reading, writing) = try socketPair()
            defer { close(reading); close(writing) }
            write(frame([UInt8](repeating: 1, count: 11)), to: writing)
            var reader = FrameReader(fd: reading)
            #expect(throws: FrameReader.Failure.oversized) { try reader.next(maximum: 10) }
        }
        for cut in [2, 6] {
            let (reading, writing) = try socketPair()
            defer { close(reading); close(writing) }
            write(Array(frame(Array("abcdef".utf8)).prefix(cut)), to: writing)
            shutdown(writing, Int32(SHUT_WR))
            var reader = FrameReader(fd: reading)
            #expect(throws: FrameReader.Failure.closed) { try reader.next(maximum: 100) }
        }
    }
}
