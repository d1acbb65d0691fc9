/// TTML's default whitespace handling around line breaks, written once for its two conversion
/// paths (the general reader's `trimLines` and the streaming ``StyledPayloadWriter``), which
/// must give the same bytes.
enum LineFeedSpaces {
    /// Appends `bytes` to `output` without the spaces just before a line feed or at the start of
    /// the line after it; spaces elsewhere, the run's trailing ones included, are kept. Works on
    /// bytes, since space and line feed are ASCII and every other byte is copied as it is.
    static func append<Bytes: Sequence<UInt8>>(
        _ bytes: Bytes, droppingSpacesAroundLineFeedsTo output: inout [UInt8]
    ) {
        var pendingSpaces = 0
        var afterBreak = false
        for byte in bytes {
            if byte == 0x20 {
                if !afterBreak { pendingSpaces += 1 }
            } else if byte == 0x0A {
                pendingSpaces = 0
                output.append(0x0A)
                afterBreak = true
            } else {
                if pendingSpaces > 0 {
                    output.append(contentsOf: repeatElement(0x20, count: pendingSpaces))
                    pendingSpaces = 0
                }
                output.append(byte)
                afterBreak = false
            }
        }
        output.append(contentsOf: repeatElement(0x20, count: pendingSpaces))
    }
}
