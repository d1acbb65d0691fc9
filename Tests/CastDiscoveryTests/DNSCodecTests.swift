import CastDiscovery
import SystemIO
import Testing
import TestSupport

@Suite("DNS message codec")
struct DNSCodecTests {
    @Test("a message with every modelled record type round-trips exactly")
    func roundTrip() throws {
        var message = Fixtures.chromecastResponse
        message.id = 0x1234
        message.questions = [
            DNSQuestion(name: .googleCast, type: .ptr, wantsUnicastResponse: true),
            DNSQuestion(name: "_CC1AD845._sub._googlecast._tcp.local", type: .any),
        ]
        message.authorities = [
            DNSResourceRecord(
                name: "x.local", ttl: 7, data: .unknown(type: DNSRecordType(rawValue: 65280), bytes: [0, 1, 2, 0xFF])),
            DNSResourceRecord(
                name: "x.local", ttl: 7,
                data: .nsec(DNSNextSecure(nextName: "x.local", types: [.a, .txt, .srv, DNSRecordType(rawValue: 1234)]))),
        ]
        let bytes = try DNSMessageEncoder().encode(message)
        let decoded = try DNSMessageDecoder().decode(bytes)
        #expect(decoded == message)
        #expect(try DNSMessageEncoder().encode(decoded) == bytes)
        #expect(decoded.questions[0].wantsUnicastResponse)
        #expect(decoded.additionals.allSatisfy { $0.cacheFlush })
        #expect(!decoded.answers[0].cacheFlush)
    }

    @Test("the realistic Chromecast response encodes to the golden bytes, with names compressed")
    func goldenChromecastResponse() throws {
        let bytes = try DNSMessageEncoder().encode(Fixtures.chromecastResponse)
        Snapshot.assertMatches(Fixtures.hexDump(bytes), named: "chromecast-response.hex")
        Snapshot.assertMatches(
            try DNSMessageDecoder().decode(bytes).description + "\n", named: "chromecast-response.txt")
        // Compression: the instance name is written out once; every later use is a pointer.
        let instance = Array("Chromecast-b380c5847b3182e4fb2eb0d0e270bf16".utf8)
        let occurrences = (0...(bytes.count - instance.count)).filter {
            Array(bytes[$0..<$0 + instance.count]) == instance
        }
        #expect(occurrences.count == 1)
    }

    @Test("names compare without ASCII case and compress across case differences")
    func caseInsensitiveNames() throws {
        #expect(DNSName("_GoogleCast._TCP.Local") == .googleCast)
        #expect(DNSName("_GoogleCast._TCP.Local").hashValue == DNSName.googleCast.hashValue)
        let message = DNSMessage(questions: [
            DNSQuestion(name: .googleCast, type: .ptr), DNSQuestion(name: "_GOOGLECAST._tcp.local", type: .ptr),
        ])
        let bytes = try DNSMessageEncoder().encode(message)
        #expect(bytes.count == 12 + (24 + 4) + (2 + 4))
    }

    @Test("escaped dots and backslashes stay inside a label")
    func escapedLabels() {
        let name = DNSName(#"Living Room\.TV\\2._googlecast._tcp.local."#)
        #expect(name.labels == [#"Living Room.TV\2"#, "_googlecast", "_tcp", "local"])
        #expect(name.description == #"Living Room\.TV\\2._googlecast._tcp.local"#)
        #expect(DNSName(#"caf\195\169.local"#).labels == ["café", "local"])
        // A backslash followed by a combining mark is one Character but must still be escaped.
        let combining = DNSName(labels: ["a\\\u{0363}b", "local"])
        #expect(DNSName(combining.description) == combining)
    }

    @Test("encoding refuses labels over 63 bytes, empty labels, names over 255 bytes and TXT strings over 255 bytes")
    func encodingLimits() {
        let long = String(repeating: "a", count: 64)
        let cases: [(DNSMessage, DNSCodecError.Kind)] = [
            (DNSMessage(questions: [DNSQuestion(name: DNSName(labels: [long, "local"]), type: .a)]), .labelTooLong),
            (DNSMessage(questions: [DNSQuestion(name: DNSName(labels: ["a", "", "local"]), type: .a)]), .emptyLabel),
            (
                DNSMessage(questions: [
                    DNSQuestion(
                        name: DNSName(labels: Array(repeating: String(repeating: "b", count: 60), count: 5)), type: .a)
                ]), .nameTooLong
            ),
            (
                .mdnsResponse(answers: [
                    DNSResourceRecord(
                        name: "t.local", ttl: 1,
                        data: .txt(DNSTextRecord(strings: [Array(repeating: 0x41, count: 256)])))
                ]), .textStringTooLong
            ),
        ]
        for (message, kind) in cases {
            #expect(throws: DNSCodecError.self) { try DNSMessageEncoder().encode(message) }
            do { _ = try DNSMessageEncoder().encode(message) } catch { #expect(error.kind == kind) }
        }
        let many = DNSMessage.mdnsResponse(
            answers: (0..<500).map {
                DNSResourceRecord(name: DNSName(labels: ["h\($0)", "local"]), ttl: 1, data: .a(.loopback))
            })
        #expect(throws: DNSCodecError(.messageTooLarge, at: 0, "the message exceeds 9000 bytes")) {
            try DNSMessageEncoder().encode(many)
        }
    }

    @Test("an empty TXT record is written as one empty string, read back as one, and has no attributes")
    func emptyTXT() throws {
        let bytes = try DNSMessageEncoder().encode(
            .mdnsResponse(answers: [DNSResourceRecord(name: "t.local", ttl: 1, data: .txt(DNSTextRecord(strings: [])))])
        )
        #expect(Array(bytes.suffix(3)) == [0, 1, 0])
        let decoded = try DNSMessageDecoder().decode(bytes)
        #expect(decoded.answers[0].data == .txt(DNSTextRecord(strings: [[]])))
        #expect(DNSTextRecord(strings: [[]]).attributes.isEmpty)
    }
}
