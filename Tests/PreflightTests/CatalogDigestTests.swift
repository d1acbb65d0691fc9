import Foundation
@testable import Preflight
import Testing

@Suite("The catalog digest a shard records")
struct CatalogDigestTests {
    @Test(
        "the digest of a catalog file is its SHA-256 in lowercase hex, as sha256sum prints it",
        arguments: [
            (0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            // Past the one-megabyte read, so the file is digested in two pieces.
            (1_000_000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"),
            (3 << 20, "6f850bc94ae6f7de14297c01616c36d712d22864497b28a63b81d776b035e656"),
        ])
    func fileDigest(count: Int, expected: String) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "castprep-catalog-\(UUID().uuidString).json"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(repeating: UInt8(ascii: "a"), count: count).write(to: URL(fileURLWithPath: path))
        #expect(sha256OfFile(atPath: path) == expected)
        #expect(sha256OfFile(atPath: path + ".missing") == nil)
    }
}
