/// Reads the top-level box layout of an MP4/MOV file, which FFmpeg does not expose: whether
/// `moov` precedes `mdat` decides if a receiver can start playing after its first range read.
public enum MP4Boxes {
    /// The type codes of the top-level boxes in `prefix`, in order, stopping at the first box
    /// that extends past the bytes given (sizes are read from the headers, so only headers are
    /// needed: pass a reader that returns the 16 bytes at an offset).
    public static func topLevelTypes(fileSize: Int, readHeader: (Int) -> [UInt8]?) -> [String] {
        var types: [String] = []
        var offset = 0
        // Real files have a handful of top-level boxes; 1,000 bounds a hostile file.
        while offset + 8 <= fileSize, types.count < 1_000 {
            guard let header = readHeader(offset), header.count >= 8 else { break }
            var size = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            let type = String(decoding: header[4..<8], as: UTF8.self)
            if size == 1 {
                guard header.count >= 16 else { break }
                var large: UInt64 = 0
                for byte in header[8..<16] { large = large << 8 | UInt64(byte) }
                guard large <= UInt64(Int.max) else { break }
                size = Int(large)
            } else if size == 0 {
                size = fileSize - offset  // extends to the end of the file
            }
            guard size >= 8 else { break }
            types.append(type)
            offset += size
        }
        return types
    }

    /// Whether `moov` appears before `mdat`; nil when either is missing.
    public static func isFastStart(_ types: [String]) -> Bool? {
        guard let moov = types.firstIndex(of: "moov"), let mdat = types.firstIndex(of: "mdat") else { return nil }
        return moov < mdat
    }
}
