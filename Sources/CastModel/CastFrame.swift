/// Size arithmetic for the CASTV2 frame a JSON payload travels in.
///
/// A Cast message is a proto2 `CastMessage` behind a 4-byte length; devices reject a body
/// over 65,536 bytes. The body is the payload plus the envelope: protocol version, source
/// and destination ids, namespace and payload type, each with a tag and a length.
public enum CastFrame {
    /// The largest CastMessage body a device accepts (64 KiB).
    public static let maximumBodySize = 65_536

    /// The id CastPrep's sender uses as its source.
    public static let defaultSourceID = "sender-0"
    /// A destination as long as the GUID transport ids current devices give apps (36 chars),
    /// so size checks made before connecting hold for any real device.
    public static let typicalDestinationID = "00000000-0000-0000-0000-000000000000"

    /// The body size of a STRING message carrying `payloadSize` bytes of JSON.
    public static func bodySize(
        payloadSize: Int, namespace: CastNamespace, sourceID: String = defaultSourceID,
        destinationID: String = typicalDestinationID
    ) -> Int {
        func lengthDelimited(_ count: Int) -> Int { 1 + varintSize(count) + count }
        return 2  // field 1, protocol_version = CASTV2_1_0, always written
            + lengthDelimited(sourceID.utf8.count)
            + lengthDelimited(destinationID.utf8.count)
            + lengthDelimited(namespace.rawValue.utf8.count)
            + 2  // field 5, payload_type = STRING, always written
            + lengthDelimited(payloadSize)
    }

    /// The largest JSON payload that fits in one frame on `namespace`.
    public static func maximumPayloadSize(namespace: CastNamespace) -> Int {
        var size = maximumBodySize
        while bodySize(payloadSize: size, namespace: namespace) > maximumBodySize { size -= 1 }
        return size
    }

    static func varintSize(_ value: Int) -> Int {
        var count = 1
        var rest = value >> 7
        while rest > 0 {
            count += 1
            rest >>= 7
        }
        return count
    }
}
