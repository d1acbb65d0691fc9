import CastDiscovery
import Testing

@Suite("TXT attributes (RFC 6763 §6)")
struct TXTRecordTests {
    static func record(_ strings: String...) -> DNSTextRecord { DNSTextRecord(strings: strings.map { Array($0.utf8) }) }

    @Test("key=value, bare keys, empty values and values containing '='")
    func basicForms() {
        let txt = Self.record("id=abc", "flag", "rs=", "eq=a=b=c")
        #expect(txt.string(for: "id") == "abc")
        #expect(txt.attribute("flag") == DNSTextRecord.Attribute(key: "flag", value: nil))
        #expect(txt.string(for: "flag") == "")
        #expect(txt.attribute("rs")?.value == [])
        #expect(txt.string(for: "eq") == "a=b=c")
        #expect(txt.string(for: "missing") == nil)
        #expect(!txt.contains("missing"))
    }

    @Test("keys ignore ASCII case and only the first occurrence counts")
    func duplicatesAndCase() {
        let txt = Self.record("ID=first", "id=second", "Fn=Den")
        #expect(txt.string(for: "id") == "first")
        #expect(txt.string(for: "FN") == "Den")
        #expect(txt.attributes.map(\.key) == ["ID", "Fn"])
    }

    @Test("empty strings and strings without a key are ignored")
    func ignoredStrings() {
        let txt = Self.record("", "=value", "=", "k=v")
        #expect(txt.attributes == [DNSTextRecord.Attribute(key: "k", value: Array("v".utf8))])
    }

    @Test("values are binary-safe: NUL, 0xFF and invalid UTF-8 survive the wire")
    func binaryValues() throws {
        let value: [UInt8] = [0x00, 0xFF, 0xC3, 0x28, 0x3D, 0x0A]
        let txt = DNSTextRecord(attributes: [.init(key: "bin", value: value), .init(key: "bare", value: nil)])
        let bytes = try DNSMessageEncoder().encode(
            .mdnsResponse(answers: [DNSResourceRecord(name: "t.local", ttl: 1, data: .txt(txt))]))
        let decoded = try DNSMessageDecoder().decode(bytes)
        guard case .txt(let back) = decoded.answers[0].data else {
            Issue.record("not a TXT record")
            return
        }
        #expect(back.attribute("bin")?.value == value)
        #expect(back.attribute("bare")?.value == nil)
        #expect(back == txt)
    }

    @Test("setting a key replaces it in place and drops later duplicates")
    func setting() {
        let txt = Self.record("id=1", "rs=", "st=0", "RS=dup").setting("rs", to: "YouTube")
        #expect(txt.strings.map { String(decoding: $0, as: UTF8.self) } == ["id=1", "rs=YouTube", "st=0"])
        #expect(Self.record("a=1").setting("b", to: "2").strings.count == 2)
    }

    @Test("the printable form escapes bytes outside ASCII")
    func description() {
        #expect(DNSTextRecord(strings: [[0x61, 0x3D, 0x00, 0xFF]]).description == "a=\\x00\\xff")
    }
}
