import Foundation
import Hashing
import Testing

@Suite("SHA-256 through OpenSSL")
struct SHA256DigestTests {
    @Test(
        "the digest matches the standard's test vectors",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
        ])
    func knownAnswers(text: String, expected: String) throws {
        var digest = SHA256Digest()
        digest.update(Array(text.utf8))
        let finished = digest.finish()
        let bytes = try #require(finished)
        #expect(bytes.count == SHA256Digest.byteCount)
        #expect(SHA256Digest.hexadecimal(bytes) == expected)
        #expect(SHA256Digest.hash(Array(text.utf8)).map(SHA256Digest.hexadecimal) == expected)
    }

    @Test("a digest fed in uneven pieces equals one pass (a million bytes), and a million 'a's match the standard")
    func pieces() throws {
        let bytes = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var pieces = SHA256Digest()
        var offset = 0
        var size = 1
        while offset < bytes.count {
            let end = min(bytes.count, offset + size)
            pieces.update(bytes[offset..<end])
            offset = end
            size = size * 3 % 9973 + 1
        }
        #expect(pieces.finish() == SHA256Digest.hash(bytes))
        let million = try #require(SHA256Digest.hash([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)))
        #expect(SHA256Digest.hexadecimal(million) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test("bytes that are not contiguous in memory (a lazy view, Data) digest as their array does")
    func collections() {
        let text = Array("The quick brown fox jumps over the lazy dog".utf8)
        let expected = "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"
        #expect(SHA256Digest.hash(text.lazy.map { $0 }).map(SHA256Digest.hexadecimal) == expected)
        #expect(SHA256Digest.hash(Data(text)).map(SHA256Digest.hexadecimal) == expected)
        var empty = SHA256Digest()
        empty.update(UnsafeRawBufferPointer(start: nil, count: 0))
        #expect(
            empty.finish().map(SHA256Digest.hexadecimal)
                == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}
