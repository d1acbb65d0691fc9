import CastDiscovery
import CastModel
import Testing
import TestSupport

/// Packets built to break a DNS parser. Each must end in a typed error, never a crash or hang.
@Suite("DNS decoder against hostile packets")
struct HostilePacketTests {
    /// A header with the given counts.
    static func header(
        questions: UInt16 = 0, answers: UInt16 = 0, authorities: UInt16 = 0, additionals: UInt16 = 0,
        response: Bool = true
    ) -> [UInt8] {
        var bytes: [UInt8] = [0, 0, response ? 0x84 : 0, 0]
        for count in [questions, answers, authorities, additionals] {
            bytes += [UInt8(count >> 8), UInt8(count & 0xFF)]
        }
        return bytes
    }

    static let typeClass: [UInt8] = [0, 12, 0, 1]

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var bytes: [UInt8]
        var kind: DNSCodecError.Kind
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        // "a" then a pointer back to the start of the same name: following it would loop forever.
        Case(
            name: "compression loop", bytes: header(questions: 1) + [1, 0x61, 0xC0, 12] + typeClass,
            kind: .compressionLoop),
        // Two names pointing at each other: the second points back (allowed), the first forward.
        Case(
            name: "mutual pointers", bytes: header(questions: 2) + [0xC0, 18, 0, 12, 0, 1] + [0xC0, 12] + typeClass,
            kind: .forwardPointer),
        Case(
            name: "forward pointer", bytes: header(questions: 1) + [0xC0, 20] + typeClass + [0, 0, 0, 0],
            kind: .forwardPointer),
        Case(name: "pointer to itself", bytes: header(questions: 1) + [0xC0, 12] + typeClass, kind: .forwardPointer),
        Case(
            name: "pointer into the header", bytes: header(questions: 1) + [0xC0, 2] + typeClass, kind: .forwardPointer),
        Case(
            name: "label length 64",
            bytes: header(questions: 1) + [64] + Array(repeating: 0x61, count: 64) + [0] + typeClass,
            kind: .labelTooLong),
        Case(name: "label type 0x80", bytes: header(questions: 1) + [0x81, 0x61, 0] + typeClass, kind: .labelTooLong),
        Case(
            name: "name over 255 bytes",
            bytes: header(questions: 1)
                + Array(repeating: [63] + Array(repeating: 0x62, count: 63), count: 5).flatMap { $0 } + [0] + typeClass,
            kind: .nameTooLong),
        Case(
            name: "rdlength past the end",
            bytes: header(answers: 1) + [0, 0, 1, 0, 1, 0, 0, 0, 10, 0, 200, 127, 0, 0, 1], kind: .recordDataLength),
        Case(
            name: "A record of 5 bytes",
            bytes: header(answers: 1) + [0, 0, 1, 0, 1, 0, 0, 0, 10, 0, 5, 127, 0, 0, 1, 9], kind: .badRecordData),
        Case(
            name: "PTR name shorter than rdlength",
            bytes: header(answers: 1) + [0, 0, 12, 0, 1, 0, 0, 0, 10, 0, 4, 1, 0x61, 0, 0], kind: .recordDataLength),
        Case(
            name: "PTR name longer than rdlength",
            bytes: header(answers: 1) + [0, 0, 12, 0, 1, 0, 0, 0, 10, 0, 2, 1, 0x61, 0], kind: .recordDataLength),
        Case(
            name: "TXT string past its record",
            bytes: header(answers: 1) + [0, 0, 16, 0, 1, 0, 0, 0, 10, 0, 3, 5, 0x61, 0x62, 0, 0, 0],
            kind: .recordDataLength),
        Case(
            name: "SRV too short", bytes: header(answers: 1) + [0, 0, 33, 0, 1, 0, 0, 0, 10, 0, 3, 0, 0, 0],
            kind: .badRecordData),
        Case(
            name: "NSEC bitmap of 33 bytes",
            bytes: header(answers: 1) + [0, 0, 47, 0, 1, 0, 0, 0, 10, 0, 36, 0, 0, 33]
                + Array(repeating: 0xFF, count: 33), kind: .badRecordData),
        Case(
            name: "NSEC windows out of order",
            bytes: header(answers: 1) + [0, 0, 47, 0, 1, 0, 0, 0, 10, 0, 7, 0, 1, 1, 0x40, 0, 1, 0x40],
            kind: .badRecordData),
        Case(
            name: "question count larger than the packet", bytes: header(questions: 100) + [0] + typeClass,
            kind: .countExceedsPacket),
        Case(
            name: "10,000 records claimed",
            bytes: header(answers: 10_000) + [0, 0, 1, 0, 1, 0, 0, 0, 10, 0, 4, 127, 0, 0, 1], kind: .countExceedsPacket
        ),
        Case(
            name: "65535 of everything",
            bytes: header(questions: 0xFFFF, answers: 0xFFFF, authorities: 0xFFFF, additionals: 0xFFFF),
            kind: .countExceedsPacket),
        Case(name: "short header", bytes: [0, 0, 0x84, 0, 0, 1], kind: .truncated),
        Case(name: "name cut off", bytes: header(questions: 1) + [5, 0x61, 0x62] + [0, 0], kind: .truncated),
        Case(
            name: "pointer cut off", bytes: header(questions: 2) + [1, 0x61, 0, 0, 12, 0, 1] + [1, 0x62, 0xC0],
            kind: .truncated),
        Case(name: "over 9000 bytes", bytes: header() + Array(repeating: 0, count: 9000), kind: .packetTooLarge),
    ]

    @Test("hostile packet fails with the expected error", arguments: cases)
    func hostile(_ testCase: Case) {
        do {
            let message = try DNSMessageDecoder().decode(testCase.bytes)
            Issue.record("decoded instead of failing: \(message)")
        } catch {
            #expect(error.kind == testCase.kind, "\(error)")
            #expect(error.code.rawValue == testCase.kind.rawValue)
            #expect(error.offset >= 0 && error.offset <= testCase.bytes.count)
        }
    }

    @Test("the Chromecast response cut at every byte fails cleanly")
    func truncatedAtEveryByte() throws {
        let bytes = try DNSMessageEncoder().encode(Fixtures.chromecastResponse)
        for length in 0..<bytes.count {
            #expect(throws: DNSCodecError.self, "prefix of \(length) bytes") {
                try DNSMessageDecoder().decode(Array(bytes.prefix(length)))
            }
        }
        #expect(try DNSMessageDecoder().decode(bytes) == Fixtures.chromecastResponse)
    }

    /// Question k is a pointer to question k-1, so its name takes k hops; the decoder allows
    /// 64 and refuses the 65th even though each pointer is legal on its own.
    @Test("pointer chains are limited to 64 hops", arguments: [64, 65])
    func pointerChainLimit(hops: Int) throws {
        var bytes = Self.header(questions: UInt16(hops + 1), response: false) + [1, 0x61, 0] + Self.typeClass
        var previous = 12
        for _ in 0..<hops {
            let offset = bytes.count
            bytes += [0xC0 | UInt8(previous >> 8), UInt8(previous & 0xFF)] + Self.typeClass
            previous = offset
        }
        if hops <= DNSMessageDecoder.maximumPointerHops {
            let message = try DNSMessageDecoder().decode(bytes)
            #expect(message.questions.count == hops + 1)
            #expect(message.questions.allSatisfy { $0.name == DNSName("a") })
        } else {
            #expect(throws: DNSCodecError.self) { try DNSMessageDecoder().decode(bytes) }
        }
    }

    @Test("unknown record types are kept byte for byte")
    func unknownTypesPreserved() throws {
        let bytes = Self.header(answers: 1) + [0, 0xFF, 0x00, 0x80, 0x01, 0, 0, 0, 5, 0, 3, 9, 8, 7]
        let message = try DNSMessageDecoder().decode(bytes)
        #expect(message.answers[0].data == .unknown(type: DNSRecordType(rawValue: 0xFF00), bytes: [9, 8, 7]))
        #expect(message.answers[0].cacheFlush)
        #expect(try DNSMessageEncoder().encode(message) == bytes)
    }

    @Test("5,000 seeded mutations of a real response never crash, and what decodes re-encodes stably")
    func seededMutations() throws {
        let original = try DNSMessageEncoder().encode(Fixtures.chromecastResponse)
        var generator = SeededGenerator(seed: 6762)
        var decodedCount = 0
        for _ in 0..<5_000 {
            var bytes = original
            for _ in 0...Int(generator.next() % 4) {
                let position = Int(generator.next() % UInt64(bytes.count))
                switch generator.next() % 4 {
                case 0: bytes[position] = UInt8(truncatingIfNeeded: generator.next())
                case 1: bytes[position] ^= 0xC0
                case 2: bytes.removeSubrange(position...)
                default: bytes.insert(UInt8(truncatingIfNeeded: generator.next()), at: position)
                }
                if bytes.isEmpty { break }
            }
            guard let message = try? DNSMessageDecoder().decode(bytes) else { continue }
            decodedCount += 1
            if let again = try? DNSMessageEncoder().encode(message) {
                #expect(try DNSMessageDecoder().decode(again) == message)
            }
        }
        #expect(decodedCount > 25)
    }
}
