import JSONSupport
import Testing

@Suite("ByteBuffer")
struct ByteBufferTests {
    /// Writes `count` bytes of a repeating pattern, a piece at a time, into a buffer that
    /// starts with room for `capacity`.
    static func written(count: Int, capacity: Int) -> ByteBuffer {
        var buffer = ByteBuffer(minimumCapacity: capacity)
        var piece: [UInt8] = []
        for index in 0..<count {
            piece.append(UInt8(truncatingIfNeeded: index % 251))
            if piece.count == 97 || index == count - 1 {
                piece.withUnsafeBufferPointer { buffer.append($0) }
                piece.removeAll(keepingCapacity: true)
            }
        }
        return buffer
    }

    @Test(
        "finish hands over the bytes written, the same as makeArray, through every way a buffer grows",
        arguments: [(0, 16), (10, 16), (5_000, 16), (70_000, 64 << 10), (600_000, 512 << 10), (1_500_000, 100_000)])
    func finishMatchesMakeArray(count: Int, capacity: Int) {
        let expected = (0..<count).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let buffer = Self.written(count: count, capacity: capacity)
        #expect(buffer.makeArray() == expected)
        let bytes = buffer.finish()
        #expect(bytes.count == count && bytes.isEmpty == (count == 0))
        #expect(bytes.withBytes { Array($0) } == expected)
    }

    @Test("bytes handed over stay intact while later buffers reuse memory given back")
    func handedOverBytesStay() {
        let first = Self.written(count: 300_000, capacity: 512 << 10).finish()
        for _ in 0..<20 {
            var other = ByteBuffer(minimumCapacity: 512 << 10)
            other.append(repeating: 0xEE, count: 400_000)
            _ = other.finish()
        }
        #expect(first.withBytes { $0.elementsEqual((0..<300_000).lazy.map { UInt8(truncatingIfNeeded: $0 % 251) }) })
        #expect(WrittenBytes().isEmpty && WrittenBytes().withBytes { $0.count } == 0)
    }
}
