import CastModel

/// A walk over a binary property list's object graph before libplist parses it.
///
/// libplist 2.2 recurses once per nesting level and copies an object each time it is
/// referenced, so a 1 KB file whose arrays each point twice at the next one would become
/// 2^500 nodes. This counts every node as libplist would build it (shared references
/// included) without building anything, and stops at the first limit.
///
/// Format (Apple's CFBinaryPList.c comments): an 8-byte header `bplist00`, objects, an offset
/// table, and a 32-byte trailer: 6 unused bytes, the offset size, the reference size, then
/// big-endian 64-bit object count, top object and offset-table offset.
enum BinaryPlistGraph {
    static func check(_ bytes: [UInt8], name: String, maximumDepth: Int, maximumNodes: Int) throws(PlistError) {
        func refuse(_ reason: String) -> PlistError {
            PlistError(
                code: "ios.info-plist-unreadable",
                message: "\(name) is not a binary property list CastPrep reads: \(reason)",
                fix:
                    "check that PATH names the app's Info.plist; convert it with plistutil -i FILE -o FILE.xml -f xml to inspect it"
            )
        }
        guard bytes.count >= 8 + 32 else { throw refuse("shorter than a header and a trailer") }
        let trailer = bytes.count - 32
        let offsetSize = Int(bytes[trailer + 6])
        let referenceSize = Int(bytes[trailer + 7])
        func integer(at offset: Int, size: Int) -> Int? {
            guard size >= 1, size <= 8, offset >= 0, offset + size <= bytes.count else { return nil }
            var value: UInt64 = 0
            for index in 0..<size { value = value << 8 | UInt64(bytes[offset + index]) }
            return value > UInt64(Int.max) ? nil : Int(value)
        }
        guard let objectCount = integer(at: trailer + 8, size: 8), let top = integer(at: trailer + 16, size: 8),
            let tableOffset = integer(at: trailer + 24, size: 8),
            (1...8).contains(offsetSize), (1...8).contains(referenceSize),
            objectCount > 0, objectCount <= bytes.count, top < objectCount,
            tableOffset >= 8, tableOffset <= trailer, objectCount <= (trailer - tableOffset) / offsetSize
        else { throw refuse("its trailer does not describe the file") }

        func objectOffset(_ index: Int) -> Int? {
            guard index >= 0, index < objectCount,
                let offset = integer(at: tableOffset + index * offsetSize, size: offsetSize),
                offset >= 8, offset < tableOffset
            else { return nil }
            return offset
        }
        // Iterative depth-first walk: (object, depth) pairs still to visit.
        var pending = [(top, 1)]
        var visited = 0
        while let (index, depth) = pending.popLast() {
            visited += 1
            guard visited <= maximumNodes else {
                throw refuse("it holds over \(maximumNodes) values (shared objects counted each time they are used)")
            }
            guard depth <= maximumDepth else { throw refuse("it nests deeper than \(maximumDepth) levels") }
            guard let offset = objectOffset(index) else { throw refuse("object \(index) has no valid offset") }
            let marker = bytes[offset]
            let kind = marker >> 4
            // Arrays (0xA), sets (0xC) and dictionaries (0xD) hold references; nothing else does.
            guard kind == 0xA || kind == 0xC || kind == 0xD else { continue }
            var count = Int(marker & 0x0F)
            var start = offset + 1
            if count == 0x0F {
                guard start < bytes.count, bytes[start] >> 4 == 0x1 else {
                    throw refuse("object \(index) has a malformed length")
                }
                let size = 1 << Int(bytes[start] & 0x0F)
                guard let length = integer(at: start + 1, size: size) else {
                    throw refuse("object \(index) has a malformed length")
                }
                count = length
                start += 1 + size
            }
            let references = kind == 0xD ? count * 2 : count
            guard references <= (bytes.count - start) / referenceSize else {
                throw refuse("object \(index) runs past the end")
            }
            for position in 0..<references {
                guard let child = integer(at: start + position * referenceSize, size: referenceSize),
                    child < objectCount
                else {
                    throw refuse("object \(index) refers to an object that does not exist")
                }
                pending.append((child, depth + 1))
            }
        }
    }
}
