import KeyhavenAgentClient
import NIOCore

/// Splits the byte stream into frames: a 4-byte big-endian length, then the frame. A length over
/// the largest request is an error, which closes that client's connection and nothing else.
struct FrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

    struct OversizedFrame: Error {}

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let length = buffer.getInteger(at: buffer.readerIndex, as: UInt32.self) else { return .needMoreData }
        guard Int(length) <= AgentFraming.maximumRequest else { throw OversizedFrame() }
        guard buffer.readableBytes >= 4 + Int(length) else { return .needMoreData }
        buffer.moveReaderIndex(forwardBy: 4)
        context.fireChannelRead(Self.wrapInboundOut(buffer.readSlice(length: Int(length))!))
        return .continue
    }
}
