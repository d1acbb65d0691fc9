import CastModel
import Testing
import TestSupport

@testable import CastChannel

@Suite("CASTV2 framing")
struct FramingTests {
    @Test("a frame is a 4-byte big-endian length, then the body")
    func frameGolden() throws {
        let frame = try ChannelFraming.frame(pingMessage)
        #expect(Array(frame.prefix(4)) == [0x00, 0x00, 0x00, 0x54])  // 84-byte body
        #expect(Array(frame.dropFirst(4)) == pingGolden)
    }

    /// A message whose body is exactly `size` bytes (namespace "n", ids "a" and "b").
    static func message(bodySize size: Int) -> ChannelMessage {
        // Envelope: 2 + 3 + 3 + 3 + 2 = 13 bytes, then tag + length varint + payload.
        var payloadSize = size - 13 - 1 - 1
        while 13 + 1 + ProtobufWriter.varintSize(UInt64(payloadSize)) + payloadSize > size { payloadSize -= 1 }
        return ChannelMessage(
            sourceID: "a", destinationID: "b", namespace: "n",
            payload: .string(String(repeating: "x", count: payloadSize)))
    }

    @Test("a 65,536-byte body frames; one byte more is refused with the sizes")
    func encodeLimit() throws {
        let largest = Self.message(bodySize: CastFrame.maximumBodySize)
        #expect(largest.protobufSize == CastFrame.maximumBodySize)
        let frame = try ChannelFraming.frame(largest)
        #expect(Array(frame.prefix(4)) == [0x00, 0x01, 0x00, 0x00])
        var decoder = ChannelFrameDecoder()
        #expect(try decoder.append(frame) == [largest])

        var tooLarge = largest
        tooLarge.payload = .string(String(repeating: "x", count: 65_520))
        #expect(tooLarge.protobufSize == CastFrame.maximumBodySize + 1)
        let error = #expect(throws: ChannelError.self) { try ChannelFraming.frame(tooLarge) }
        #expect(error?.code == ChannelError.Code.frameTooLarge)
        #expect(error?.message.contains("65537") == true)
    }

    /// Frames of several kinds back to back, with a zero-length frame in the middle.
    static let stream: (bytes: [UInt8], messages: [ChannelMessage]) = {
        let messages = [
            pingMessage,
            ChannelMessage.pong(from: "receiver-0", to: "sender-0"),
            ChannelMessage.connect(to: "receiver-0"),
            ChannelMessage(
                sourceID: "sender-0", destinationID: "receiver-0", namespace: .deviceAuth,
                payload: .binary([0x0A, 0x00])),
            ChannelMessage(
                sourceID: "receiver-0", destinationID: "*", namespace: .receiver,
                payload: .string(String(repeating: "ü", count: 150))),
        ]
        var bytes: [UInt8] = []
        for (index, message) in messages.enumerated() {
            if index == 2 { bytes += [0, 0, 0, 0] }
            bytes += (try? ChannelFraming.frame(message)) ?? []
        }
        return (bytes, messages)
    }()

    @Test("a stream of frames split at every byte position decodes to the same messages")
    func everySplitPoint() throws {
        let (bytes, expected) = Self.stream
        for split in 0...bytes.count {
            var decoder = ChannelFrameDecoder()
            var decoded = try decoder.append(bytes[..<split])
            decoded += try decoder.append(bytes[split...])
            #expect(decoded == expected, "split at \(split)")
            #expect(decoder.bufferedByteCount == 0)
            #expect(decoder.emptyFramesSkipped == 1)
            try decoder.finish()
        }
    }

    @Test("byte by byte, and in random chunk sizes, the stream decodes the same")
    func arbitraryChunks() throws {
        let (bytes, expected) = Self.stream
        var decoder = ChannelFrameDecoder()
        var decoded: [ChannelMessage] = []
        for byte in bytes { decoded += try decoder.append([byte]) }
        #expect(decoded == expected)

        for seed in UInt64(1)...50 {
            var generator = SeededGenerator(seed: seed)
            var decoder = ChannelFrameDecoder()
            var decoded: [ChannelMessage] = []
            var index = 0
            while index < bytes.count {
                let size = Int(generator.next() % 97)
                let end = min(bytes.count, index + size)
                decoded += try decoder.append(bytes[index..<end])
                index = end
            }
            #expect(decoded == expected, "seed \(seed)")
        }
    }

    @Test("a length over 64 KiB is refused as soon as its four bytes arrive")
    func oversizeLengthRejectedEarly() {
        var decoder = ChannelFrameDecoder()
        #expect(throws: Never.self) { try decoder.append([0x00, 0x01, 0x00]) }
        let error = #expect(throws: ChannelError.self) { try decoder.append([0x01]) }
        #expect(error?.code == ChannelError.Code.frameTooLarge)
        #expect(error?.message.contains("65537") == true)
        // The failure sticks: the frame boundary is lost.
        let again = #expect(throws: ChannelError.self) { try decoder.append(Self.stream.bytes) }
        #expect(again?.code == ChannelError.Code.frameTooLarge)
    }

    @Test(
        "a length of 4 GiB - 1 and one exactly at the limit",
        arguments: [[0xFF, 0xFF, 0xFF, 0xFF] as [UInt8], [0x80, 0x00, 0x00, 0x00]])
    func hugeLengths(header: [UInt8]) {
        var decoder = ChannelFrameDecoder()
        let error = #expect(throws: ChannelError.self) { try decoder.append(header) }
        #expect(error?.code == ChannelError.Code.frameTooLarge)
    }

    @Test("a stream that stops inside a frame is reported at the end, at every cut")
    func truncatedStream() throws {
        let bytes = Self.stream.bytes
        let boundaries = Set(Self.frameBoundaries(bytes))
        for cut in 0..<bytes.count where !boundaries.contains(cut) {
            var decoder = ChannelFrameDecoder()
            _ = try decoder.append(bytes[..<cut])
            let error = #expect(throws: ChannelError.self) { try decoder.finish() }
            #expect(error?.code == ChannelError.Code.frameTruncated, "cut at \(cut)")
        }
    }

    static func frameBoundaries(_ bytes: [UInt8]) -> [Int] {
        var boundaries = [0]
        var index = 0
        while index + 4 <= bytes.count {
            let length =
                Int(bytes[index]) << 24 | Int(bytes[index + 1]) << 16 | Int(bytes[index + 2]) << 8
                | Int(bytes[index + 3])
            index += 4 + length
            boundaries.append(index)
        }
        return boundaries
    }

    @Test("a well-framed body that is not a CastMessage fails with the codec's code")
    func garbageBody() {
        var decoder = ChannelFrameDecoder()
        let garbage: [UInt8] = [0x00, 0x00, 0x00, 0x05, 0x47, 0x45, 0x54, 0x20, 0x2F]  // "GET /"
        let error = #expect(throws: ChannelError.self) { try decoder.append(garbage) }
        #expect(error.map { $0.code.rawValue.hasPrefix("channel.proto-") } == true, "\(String(describing: error))")
    }

    @Test("random bytes never trap the decoder")
    func randomBytes() {
        for seed in UInt64(1)...300 {
            var generator = SeededGenerator(seed: seed)
            let count = Int(generator.next() % 200)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if seed % 2 == 0, bytes.count >= 4 {
                bytes[0] = 0
                bytes[1] = 0
            }  // plausible lengths
            var decoder = ChannelFrameDecoder()
            _ = try? decoder.append(bytes)
            _ = try? ChannelMessage(protobuf: bytes)
        }
    }
}
