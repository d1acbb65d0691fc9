/// Reads ISO BMFF (MP4/MOV) box headers, which FFmpeg does not expose: the top-level layout
/// (whether `moov` precedes `mdat` decides if a receiver can start playing after its first
/// range read) and the movie duration from `moov` → `mvhd` in the first bytes of a file.
///
/// Every size comes from the file, so offsets are added with overflow checks and a box that
/// claims more bytes than there are ends the walk instead of trapping.
public enum MP4Boxes {
    /// Top-level boxes beyond this are not listed: real files have a handful.
    public static let maximumTopLevelBoxes = 1_000

    /// The type codes of the top-level boxes of a file of `fileSize` bytes, in order, stopping
    /// at the first box whose header is unreadable or whose size is impossible (sizes are read
    /// from the headers, so only headers are needed: pass a reader that returns the 16 bytes at
    /// an offset).
    public static func topLevelTypes(fileSize: Int, readHeader: (Int) -> [UInt8]?) -> [String] {
        var types: [String] = []
        var offset = 0
        while offset <= fileSize - 8, types.count < maximumTopLevelBoxes {
            guard let header = readHeader(offset), header.count >= 8 else { break }
            var size = Int(integer(header[...], at: 0, width: 4))
            if size == 1 {
                guard header.count >= 16 else { break }
                let large = integer(header[...], at: 8, width: 8)
                guard large <= UInt64(Int.max) else { break }
                size = Int(large)
            } else if size == 0 {
                size = fileSize - offset  // extends to the end of the file
            }
            guard size >= 8 else { break }
            types.append(String(decoding: header[4..<8], as: UTF8.self))
            let (next, overflow) = offset.addingReportingOverflow(size)
            guard !overflow else { break }
            offset = next
        }
        return types
    }

    /// Whether `moov` appears before `mdat`; nil when either is missing.
    public static func isFastStart(_ types: [String]) -> Bool? {
        guard let moov = types.firstIndex(of: "moov"), let mdat = types.firstIndex(of: "mdat") else { return nil }
        return moov < mdat
    }

    /// Whether the bytes start like an ISO BMFF file (`ftyp`, `moov` or `styp` first).
    public static func looksLikeMP4(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 8 && [Array("ftyp".utf8), Array("moov".utf8), Array("styp".utf8)].contains(Array(bytes[4..<8]))
    }

    /// The movie duration in seconds from `moov` → `mvhd`, when `moov` lies wholly in `bytes`
    /// (the first bytes of a file); nil when it does not, or when `mvhd` says "unknown".
    public static func movieDuration(_ bytes: [UInt8]) -> Double? {
        guard let moov = box("moov", in: bytes[...]), let mvhd = box("mvhd", in: moov), mvhd.count >= 20 else {
            return nil
        }
        let start = mvhd.startIndex
        let timescale: UInt64
        let duration: UInt64
        if mvhd[start] == 1 {
            guard mvhd.count >= 32 else { return nil }
            timescale = integer(mvhd, at: start + 20, width: 4)
            duration = integer(mvhd, at: start + 24, width: 8)
        } else {
            timescale = integer(mvhd, at: start + 12, width: 4)
            duration = integer(mvhd, at: start + 16, width: 4)
        }
        // All ones means "unknown" in mvhd.
        guard timescale > 0, duration > 0, duration != UInt64(UInt32.max), duration != UInt64.max else { return nil }
        return Double(duration) / Double(timescale)
    }

    /// The payload of the first box of `type` at this level, when it lies wholly in `bytes`.
    public static func box(_ type: String, in bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        let wanted = Array(type.utf8)
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= 8 {
            var size = Int(clamping: integer(bytes, at: offset, width: 4))
            var header = 8
            if size == 1 {
                guard bytes.endIndex - offset >= 16 else { return nil }
                size = Int(clamping: integer(bytes, at: offset + 8, width: 8))
                header = 16
            } else if size == 0 {
                size = bytes.endIndex - offset
            }
            guard size >= header, size <= bytes.endIndex - offset else { return nil }
            if bytes[(offset + 4)..<(offset + 8)].elementsEqual(wanted) {
                return bytes[(offset + header)..<(offset + size)]
            }
            offset += size
        }
        return nil
    }

    /// The big-endian unsigned integer of `width` bytes (at most 8) at `offset`.
    static func integer(_ bytes: ArraySlice<UInt8>, at offset: Int, width: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in offset..<(offset + width) { value = value << 8 | UInt64(bytes[index]) }
        return value
    }
}
